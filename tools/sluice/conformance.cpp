// `sluice conformance`: the conformance library's queue checks (conformance/check.h) and op cases
// (conformance/op_cases.h, run in batches by op_runner.h with guard bytes around every buffer) and the
// ONNX backend suite on each device, a device x group summary, one reproducing command per failure, and
// exit code 1 on any unexpected result (a failure, or a pass of a known failure).
#include <nlohmann/json.hpp>

#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <utility>

#include "conformance/check.h"
#include "conformance/devices.h"
#include "conformance/op_runner.h"
#include "frontend/onnx/backend_suite.h"
#include "runtime/device.h"
#include "runtime/expectations.h"
#include "runtime/realize.h"
#include "tools/sluice/cli.h"
#include "tools/sluice/plant.h"
#include "tools/sluice/trace.h"

namespace sluice::cli {
namespace {

using Status = CaseStatus;

struct Result {
  std::string device, name, group;
  Status status = Status::Pass;
  double error = 0;    // worst |got - want| / max(1, |want|) over the case's float elements
  std::string detail;  // why it failed or was skipped
  std::string family;  // ONNX cases: the op the case tests
};

// The op an ONNX case tests: its only op, else the op its name starts with (test_softmax_axis_0_expanded
// -> Softmax), else its first op.
std::string onnx_family(const std::string& case_name, const std::string& ops) {
  std::vector<std::string> list;
  for (size_t a = 0; a < ops.size();) {
    size_t b = ops.find(',', a);
    if (b == std::string::npos) b = ops.size();
    list.push_back(ops.substr(a, b - a));
    a = b + 1;
  }
  if (list.empty()) return "(model did not load)";
  if (list.size() == 1) return list[0];
  std::string lower = case_name.substr(case_name.find("test_") == 0 ? 5 : 0);
  for (char& c : lower) c = char(std::tolower(c));
  std::string best;
  for (const std::string& op : list) {
    std::string l = op;
    for (char& c : l) c = char(std::tolower(c));
    if (lower.rfind(l, 0) == 0 && l.size() > best.size()) best = op;
  }
  return best.empty() ? list[0] : best;
}

struct Options {
  std::string device, filter, suite;
  bool quick = false, json = false, list = false;
};

std::string reproduce(const Result& r) {
  return "sluice conformance" + std::string(r.name.rfind("onnx/", 0) == 0 ? " --suite onnx" : "") +
         " --device " + r.device + " --filter " + shell_quote(r.name);
}

std::string fit(std::string s, size_t width) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

int run(const Options& o) {
  std::vector<std::string> devices = select_devices(o.device);
  // The selected cases: --quick's subset, then --filter.
  std::set<std::string> suites;
  for (size_t a = 0; a <= o.suite.size();) {
    size_t b = std::min(o.suite.find(',', a), o.suite.size());
    std::string s = o.suite.substr(a, b - a);
    if (s == "all")
      suites.insert({"queue", "ops", "onnx"});
    else if (s == "queue" || s == "ops" || s == "onnx")
      suites.insert(s);
    else
      throw UsageError("--suite '" + s + "' is not one of queue, ops, onnx, all");
    a = b + 1;
  }
  std::vector<const conformance::Check*> checks;
  std::vector<const conformance::OpCase*> ops;
  std::vector<onnx::suite::Case> onnx_cases;
  if (suites.count("queue"))
    for (const conformance::Check& q : conformance::checks())
      if (glob_match(o.filter, q.name)) checks.push_back(&q);
  if (suites.count("ops"))
    for (const conformance::OpCase& c : conformance::op_cases())
      if ((!o.quick || c.quick) && glob_match(o.filter, c.name)) ops.push_back(&c);
  if (suites.count("onnx")) {
    const std::string root = onnx::suite::data_dir();
    if (root.empty() && suites.size() == 1)
      throw UsageError(
          "the ONNX backend test data is not installed (scripts/install-deps.sh onnx installs "
          "Debian's libonnx-testdata; SLUICE_ONNX_TESTDATA names another folder)");
    onnx_cases = onnx::suite::list_cases(root, o.filter);
  }
  if (checks.empty() && ops.empty() && onnx_cases.empty())
    throw UsageError(
        "--filter '" + o.filter +
        "' matches no case (names look like queue/exec, ops/add/float32/7x13 or onnx/node/test_abs)");

  if (o.list) {  // the selected cases, without running them
    nlohmann::json j = nlohmann::json::array();
    for (const conformance::Check* q : checks) j.push_back({{"name", q->name}, {"group", "queue"}});
    for (const conformance::OpCase* c : ops) j.push_back({{"name", c->name}, {"group", c->group}});
    for (const auto& c : onnx_cases) j.push_back({{"name", c.id()}, {"group", "onnx/" + c.group}});
    if (o.json)
      std::cout << nlohmann::json{{"cases", j}}.dump(2) << "\n";
    else
      for (const auto& c : j) std::printf("%s\n", std::string(c["name"]).c_str());
    return 0;
  }
  const bool bar = !o.json && stdout_is_terminal();
  std::vector<Result> results;
  const auto t0 = std::chrono::steady_clock::now();
  for (const std::string& name : devices) {
    hcq::Device& dev = open_device(name);
    trace_device(dev);
    Progress progress(name, checks.size() + ops.size() + onnx_cases.size(), bar);
    conformance::Context ctx(conformance::device_entry(name), dev, name);
    for (const conformance::Check* q : checks) {
      Verdict v = conformance::run_check(*q, ctx);
      results.push_back({name, q->name, "queue", v.status, 0, std::move(v.detail), ""});
      progress.step();
    }
    for (const auto& c : onnx_cases) {
      onnx::suite::Result r = onnx::suite::run_case(c, name);
      Result x{name, c.id(), "onnx/" + c.group, r.status, r.worst, r.detail, onnx_family(c.name, r.ops)};
      results.push_back(x);
      progress.step();
    }
    if (ops.empty()) continue;
    RealizeOptions guarded;
    guarded.guard_bytes = conformance::kGuardBytes;
    Realizer* realizer = nullptr;
    if (std::getenv("SLUICE_CONFORMANCE_PLANT"))  // test-only (plant.h); kept until exit, as the registry's
      realizer = new Realizer(dev, planted_target(device_target(name), name), guarded);
    else
      (realizer = &sluice::realizer(name))->set_options(guarded);
    conformance::OpRunOptions opts;
    size_t shown = 0;
    opts.progress = [&](size_t done) { progress.step(done - std::exchange(shown, done)); };
    for (conformance::OpResult& r : conformance::run_op_cases(name, *realizer, ops, opts))
      results.push_back(
          {name, r.op->name, r.op->group, r.verdict.status, r.error, std::move(r.verdict.detail), ""});
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Summary per device and group, in first-seen order.
  struct Row {
    std::string device, group;
    size_t n[5] = {};
    double worst = 0;
  };
  std::vector<Row> rows;
  std::map<std::pair<std::string, std::string>, size_t> at;
  size_t unexpected = 0;
  for (const Result& r : results) {
    auto [it, fresh] = at.emplace(std::make_pair(r.device, r.group), rows.size());
    if (fresh) rows.push_back({r.device, r.group});
    Row& row = rows[it->second];
    row.n[int(r.status)]++;
    row.worst = std::max(row.worst, r.error);
    unexpected += r.status == Status::Fail || r.status == Status::XPass;
  }
  if (o.json) {
    nlohmann::json j;
    j["seconds"] = seconds;
    j["cases"] = results.size();
    j["unexpected"] = unexpected;
    j["groups"] = nlohmann::json::array();
    for (const Row& row : rows)
      j["groups"].push_back({{"device", row.device},
                             {"group", row.group},
                             {"passed", row.n[0]},
                             {"failed", row.n[1]},
                             {"skipped", row.n[2]},
                             {"expected_failures", row.n[3]},
                             {"unexpected_passes", row.n[4]},
                             {"worst_error", row.worst}});
    if (!onnx_cases.empty()) {
      std::map<std::pair<std::string, std::string>, std::array<size_t, 5>> fam;
      for (const Result& r : results)
        if (!r.family.empty()) fam[{r.device, r.family}][size_t(r.status)]++;
      j["onnx_ops"] = nlohmann::json::array();
      for (const auto& [k, n] : fam)
        j["onnx_ops"].push_back({{"device", k.first},
                                 {"op", k.second},
                                 {"passed", n[0]},
                                 {"failed", n[1]},
                                 {"skipped", n[2]},
                                 {"expected_failures", n[3]},
                                 {"unexpected_passes", n[4]}});
    }
    j["results"] = nlohmann::json::array();
    for (const Result& r : results) {
      if (r.status == Status::Pass) continue;
      nlohmann::json e = {{"device", r.device},
                          {"name", r.name},
                          {"group", r.group},
                          {"status", case_status_name(r.status)},
                          {"detail", r.detail}};
      if (r.status == Status::Fail || r.status == Status::XPass) e["reproduce"] = reproduce(r);
      j["results"].push_back(e);
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("%-8s %-16s %7s %7s %7s %7s %10s\n", "device", "group", "passed", "failed", "skipped",
                "xfail", "worst err");
    for (const Row& row : rows)
      std::printf("%-8s %-16s %7zu %7zu %7zu %7zu %10.2g\n", fit(row.device, 8).c_str(),
                  fit(row.group, 16).c_str(), row.n[0], row.n[1] + row.n[4], row.n[2], row.n[3], row.worst);
    if (!onnx_cases.empty()) {  // ONNX ops with a case that did not pass
      std::map<std::pair<std::string, std::string>, std::array<size_t, 5>> fam;
      for (const Result& r : results)
        if (!r.family.empty()) fam[{r.device, r.family}][size_t(r.status)]++;
      bool head = false;
      for (const auto& [k, n] : fam) {
        if (n[1] + n[2] + n[3] + n[4] == 0) continue;
        if (!head)
          std::printf("\n%-8s %-24s %7s %7s %7s %7s\n", "device", "onnx op", "passed", "failed", "skipped",
                      "xfail");
        head = true;
        std::printf("%-8s %-24s %7zu %7zu %7zu %7zu\n", fit(k.first, 8).c_str(), fit(k.second, 24).c_str(),
                    n[0], n[1] + n[4], n[2], n[3]);
      }
    }
    for (const Result& r : results) {
      if (r.status != Status::Fail && r.status != Status::XPass) continue;
      std::printf("\n%s %s %s\n  %s\n  %s\n", r.status == Status::Fail ? "FAIL" : "XPASS", r.device.c_str(),
                  fit(r.name, 60).c_str(), fit(r.detail, 76).c_str(), reproduce(r).c_str());
    }
    std::printf("\n%zu cases on %zu device(s) in %.1f s: %zu unexpected\n", results.size(), devices.size(),
                seconds, unexpected);
  }
  return unexpected ? kExitFailed : 0;
}

}  // namespace

void add_conformance_command(CLI::App& app, int& exit_code) {
  static Options o;
  CLI::App* cmd = app.add_subcommand("conformance", "Queue checks and op sweep against the reference");
  cmd->add_option("--device", o.device, "Devices, comma-separated (default: all present)");
  cmd->add_option("--suite", o.suite, "queue, ops, onnx or all, comma-separated")->default_val("queue,ops");
  cmd->add_option("--filter", o.filter, "Only cases matching this glob ('ops/add/*')")->default_val("*");
  cmd->add_flag("--quick", o.quick, "Representative subset: about one case per op");
  cmd->add_flag("--json", o.json, "Machine-readable output on stdout");
  cmd->add_flag("--list", o.list, "List the selected cases instead of running them");
  cmd->footer(
      "Suites: queue (the queue contract on each device), ops (the op sweep\n"
      "against the reference evaluator), onnx (the ONNX backend test suite from\n"
      "libonnx-testdata; cases are named onnx/<group>/<case>).\n"
      "Examples:\n"
      "  sluice conformance --quick\n"
      "  sluice conformance --suite onnx --device CPU --filter 'onnx/node/test_conv*'\n" +
      exit_codes_help("a case failed, or a known failure passed"));
  cmd->callback([&exit_code] { exit_code = run(o); });
}

}  // namespace sluice::cli
