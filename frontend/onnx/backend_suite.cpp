#include "frontend/onnx/backend_suite.h"

#include <onnx/onnx_pb.h>  // first: it defines the export macros the other headers use
#include <onnx/onnx-data.pb.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <fstream>
#include <set>
#include <sstream>

#include "base/error.h"
#include "frontend/onnx/model.h"
#include "frontend/onnx/proto.h"
#include "runtime/expectations.h"
#include "runtime/reference.h"

namespace sluice::onnx::suite {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  SLUICE_CHECK_IN(ValueError, "onnx suite", in.good() || in.eof()) << "cannot read " << p.string();
  return ss.str();
}

// The suite stores bfloat16 data as uint16 (numpy has no bfloat16): the declared type says which it is.
Tensor tensor_of(const ::onnx::TensorProto& t, const std::string& where, const ValueInfo& info,
                 const std::string& device) {
  auto d = tensor_from_proto(t, "", where);
  if (info.known_dtype && info.dtype == dtypes::bfloat16 && d->dtype == dtypes::uint16) {
    auto host = std::make_shared<HostBuffer>(*d->host);
    host->dtype = dtypes::bfloat16;
    return Tensor::from_host(std::move(host), d->shape, device);
  }
  return Tensor::from_host(d->host, d->shape, device);
}

// A serialized value of the kind the model declares: a TensorProto, SequenceProto or OptionalProto.
Value read_value(const fs::path& p, const ValueInfo& info, const std::string& device) {
  const std::string bytes = read_file(p);
  const std::string where = p.filename().string();
  auto from_sequence = [&](const ::onnx::SequenceProto& s) {
    std::vector<Tensor> items;
    DType dt = info.known_dtype ? info.dtype : dtypes::float32;
    for (const auto& t : s.tensor_values()) {
      items.push_back(tensor_of(t, where, info, device));
      dt = items.back().dtype();
    }
    return Value::sequence(std::move(items), dt);
  };
  if (info.kind == ValueInfo::Kind::Sequence) {
    ::onnx::SequenceProto s;
    SLUICE_CHECK_IN(ValueError, "onnx suite", s.ParseFromString(bytes)) << where << " is not a SequenceProto";
    return from_sequence(s);
  }
  if (info.kind == ValueInfo::Kind::Optional) {
    ::onnx::OptionalProto o;
    SLUICE_CHECK_IN(ValueError, "onnx suite", o.ParseFromString(bytes)) << where << " is not an OptionalProto";
    if (o.has_tensor_value()) return tensor_of(o.tensor_value(), where, info, device);
    if (o.has_sequence_value()) return from_sequence(o.sequence_value());
    return Value();
  }
  ::onnx::TensorProto t;
  SLUICE_CHECK_IN(ValueError, "onnx suite", t.ParseFromString(bytes)) << where << " is not a TensorProto";
  return tensor_of(t, where, info, device);
}

eval::HostArray host_of(const Tensor& t) { return reference(t); }

// "" when got matches want (see the header's rule), else what differs.
std::string compare(const eval::HostArray& got, const eval::HostArray& want, double& worst) {
  if (got.dtype != want.dtype)
    return "dtype " + onnx_type_name(got.dtype) + ", want " + onnx_type_name(want.dtype);
  if (got.shape != want.shape) return "shape " + tuple_str(got.shape) + ", want " + tuple_str(want.shape);
  const bool half = want.dtype == dtypes::float16 || want.dtype == dtypes::bfloat16;
  const double rtol = half ? 1e-2 : 1e-3, atol = half ? 1e-3 : 1e-7;
  for (int64_t k = 0; k < want.numel(); ++k) {
    bool ok;
    if (want.dtype.is_float()) {
      const double x = got.f[size_t(k)], w = want.f[size_t(k)];
      if (std::isfinite(w) && std::isfinite(x)) worst = std::max(worst, std::abs(x - w) / std::max(1.0, std::abs(w)));
      ok = std::isnan(w) ? std::isnan(x) : std::isinf(w) ? x == w : std::abs(x - w) <= atol + rtol * std::abs(w);
    } else {
      ok = got.i[size_t(k)] == want.i[size_t(k)];
    }
    if (!ok) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "element %lld of %lld: got %.9g, want %.9g", (long long)k,
                    (long long)want.numel(), got.value(k), want.value(k));
      return buf;
    }
  }
  return "";
}

std::string compare_values(const Value& got, const Value& want, double& worst) {
  if (got.kind() != want.kind()) return "got " + got.str() + ", want " + want.str();
  if (got.is_tensor()) return compare(host_of(got.tensor()), host_of(want.tensor()), worst);
  if (got.is_sequence()) {
    const auto &g = got.items(), &w = want.items();
    if (g.size() != w.size())
      return "sequence of " + std::to_string(g.size()) + " items, want " + std::to_string(w.size());
    for (size_t i = 0; i < g.size(); ++i)
      if (std::string d = compare(host_of(g[i]), host_of(w[i]), worst); !d.empty())
        return "item " + std::to_string(i) + ": " + d;
  }
  return "";
}

std::string ops_of(const Graph& g) {
  std::set<std::string> ops;
  std::function<void(const Graph&)> walk = [&](const Graph& x) {
    for (const Node& n : x.nodes) {
      ops.insert(n.op_type);
      for (const auto& [k, a] : n.attrs)
        if (auto* sub = std::get_if<std::shared_ptr<const Graph>>(&a)) walk(**sub);
    }
  };
  walk(g);
  std::string out;
  for (const std::string& o : ops) out += (out.empty() ? "" : ",") + o;
  return out;
}

// Runs every data set of the case; "" when all match.
std::string run_sets(const Case& c, const std::string& device, Result& r) {
  Model m = Model::load((fs::path(c.dir) / "model.onnx").string(), {.device = device});
  r.ops = ops_of(*m.parsed().graph);
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(c.dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test_data_set_* folder";
  for (const fs::path& set : sets) {
    std::map<std::string, Value> in;
    for (size_t k = 0; k < m.inputs().size(); ++k) {
      const fs::path p = set / ("input_" + std::to_string(k) + ".pb");
      if (fs::exists(p)) in[m.inputs()[k].name] = read_value(p, m.inputs()[k], device);
    }
    std::vector<Value> out = m.run(in);
    for (size_t k = 0; k < m.outputs().size(); ++k) {
      const fs::path p = set / ("output_" + std::to_string(k) + ".pb");
      if (!fs::exists(p)) continue;
      Value want = read_value(p, m.outputs()[k], device);
      if (std::string d = compare_values(out.at(k), want, r.worst); !d.empty())
        return set.filename().string() + " output " + std::to_string(k) + " ('" + m.outputs()[k].name + "'): " + d;
    }
  }
  return "";
}

}  // namespace

std::string data_dir() {
  if (const char* e = std::getenv("SLUICE_ONNX_TESTDATA"); e && *e) return e;
  const char* debian = "/usr/share/libonnx-testdata/data";
  std::error_code ec;
  return fs::is_directory(debian, ec) ? debian : "";
}

std::vector<Case> list_cases(const std::string& root, const std::string& glob) {
  std::vector<Case> out;
  std::error_code ec;
  if (root.empty() || !fs::is_directory(root, ec)) return out;
  for (const auto& g : fs::directory_iterator(root)) {
    if (!g.is_directory() || g.path().filename() == "real") continue;
    for (const auto& c : fs::directory_iterator(g.path())) {
      if (!fs::exists(c.path() / "model.onnx")) continue;
      Case x{g.path().filename().string(), c.path().filename().string(), c.path().string()};
      if (glob_match(glob, x.id())) out.push_back(std::move(x));
    }
  }
  std::sort(out.begin(), out.end(), [](const Case& a, const Case& b) { return a.id() < b.id(); });
  return out;
}

Result run_case(const Case& c, const std::string& device) {
  Result r;
  const Expectation* e = expectation_for(device, c.id());
  if (e && e->expect == Expect::Unsupported) {
    r.status = Status::Skip;
    r.detail = e->reason;
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::string fail;
  try {
    fail = run_sets(c, device, r);
  } catch (const std::exception& ex) { fail = ex.what(); }
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  Verdict v = judge(device, c.id(), fail);
  r.status = v.status, r.detail = std::move(v.detail);
  return r;
}

std::string reproduce(const Case& c, const std::string& device) {
  return "sluice conformance --suite onnx --device " + device + " --filter " + c.id();
}

}  // namespace sluice::onnx::suite
