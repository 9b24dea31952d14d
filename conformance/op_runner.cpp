#include "conformance/op_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "runtime/device.h"
#include "runtime/reference.h"

namespace sluice::conformance {
namespace {

// The comparison of op_runner.h; "" when they match.
std::string compare(const eval::HostArray& got, const eval::HostArray& want, double rtol, double atol,
                    double& worst) {
  if (got.dtype != want.dtype || got.shape != want.shape) return "got " + got.str() + "\nwant " + want.str();
  for (int64_t k = 0; k < want.numel(); ++k) {
    if (!want.is_defined(k)) continue;
    bool ok;
    if (want.dtype.is_float()) {
      const double x = got.f[size_t(k)], w = want.f[size_t(k)];
      if (!std::isnan(w) && !std::isinf(w) && !std::isnan(x))
        worst = std::max(worst, std::abs(x - w) / std::max(1.0, std::abs(w)));
      ok = std::isnan(w)   ? std::isnan(x)
           : std::isinf(w) ? x == w
                           : std::abs(x - w) <= atol + rtol * std::abs(w);
    } else {
      ok = got.i[size_t(k)] == want.i[size_t(k)];
    }
    if (!ok) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "element %lld: got %.9g, want %.9g", (long long)k, got.value(k),
                    want.value(k));
      return buf;
    }
  }
  return "";
}

// Why `device` cannot run a case that needs dtype `what` ("" when it can), from what the device reports.
std::string lacks(const std::string& device, const std::string& what) {
  if (what.empty()) return "";
  const hcq::Properties p = open_device(device).properties();
  const bool ok = what == "float64"   ? p.float64
                  : what == "float16" ? p.float16
                  : what == "int64"   ? p.int64
                                      : true;
  return ok ? "" : device + " reports no " + what + " support";
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

// One case on its way through a batch.
struct Pending {
  OpResult* result;
  std::optional<Tensor> tensor;
  eval::HostArray want;  // unused for a case run end to end without values
  bool values = true;    // false: only the result's shape is checked
  std::string failure;
};

// Sets p.failure from the realized value and the batch's guard violations.
void check_one(Pending& p, const eval::HostArray& got, const std::vector<std::string>& guards) {
  const OpCase& c = *p.result->op;
  if (p.values)
    p.failure = compare(got, p.want, c.rtol, c.atol, p.result->error);
  else if (got.shape != p.tensor->shape())
    p.failure = "got shape " + shape_str(got.shape) + ", want " + shape_str(p.tensor->shape());
  if (p.failure.empty() && !guards.empty()) p.failure = "out-of-bounds write: " + guards[0];
}

// Realizes the batch in one run; on a throw or a guard violation, each case alone.
void run_batch(Realizer& realizer, std::vector<Pending>& batch) {
  if (batch.empty()) return;
  std::vector<Tensor> tensors;
  for (const Pending& p : batch) tensors.push_back(*p.tensor);
  bool alone = batch.size() > 1;  // unless the batch runs clean
  try {
    RealizeReport rep;
    std::vector<eval::HostArray> got = realizer.run(tensors, &rep);
    alone = !rep.guard_violations.empty() && batch.size() > 1;
    if (!alone)
      for (size_t j = 0; j < batch.size(); ++j) check_one(batch[j], got[j], rep.guard_violations);
    if (batch.size() == 1) batch[0].result->kernels = rep.kernels;
  } catch (const std::exception& e) {
    if (batch.size() == 1) batch[0].failure = e.what();
  }
  if (alone)
    for (Pending& p : batch) {
      std::vector<Pending> one{std::move(p)};
      run_batch(realizer, one);
      p = std::move(one[0]);
    }
}

}  // namespace

std::vector<OpResult> run_op_cases(const std::string& device, Realizer& realizer,
                                   const std::vector<const OpCase*>& cases, const OpRunOptions& o) {
  std::vector<OpResult> results(cases.size());
  std::vector<Pending> batch;
  size_t done = 0;
  auto flush = [&] {
    run_batch(realizer, batch);
    for (Pending& p : batch)
      p.result->verdict =
          p.values || !p.failure.empty()
              ? judge(device, p.result->op->name, p.failure)
              : Verdict{CaseStatus::Pass, "ran end to end; values not compared: " + p.result->verdict.detail};
    done += batch.size();
    batch.clear();
    if (o.progress) o.progress(done);
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const OpCase& c = *cases[i];
    OpResult& r = results[i];
    r.op = &c;
    const Expectation* e = expectation_for(device, c.name);
    const bool unsupported = e && e->expect == Expect::Unsupported;
    std::string why = unsupported ? e->reason : lacks(device, c.needs);
    if (!why.empty()) r.verdict = {CaseStatus::Skip, why};
    if (!why.empty() && !(unsupported && o.run_unsupported)) {
      if (o.progress) o.progress(++done);
      continue;
    }
    Pending p{&r, std::nullopt, eval::HostArray(), !unsupported, ""};
    try {
      p.tensor = c.build(device);
      if (p.values) p.want = reference(*p.tensor);
    } catch (const std::exception& ex) {
      r.verdict = {CaseStatus::Fail, std::string("building the case: ") + ex.what()};
      if (o.progress) o.progress(++done);
      continue;
    }
    batch.push_back(std::move(p));
    if (batch.size() >= o.batch) flush();
  }
  if (!batch.empty()) flush();
  return results;
}

}  // namespace sluice::conformance
