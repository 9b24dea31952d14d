// A mutation fuzzer for the ONNX loader: the suite's models, mutated (bit flips, interesting bytes,
// deleted, duplicated and inserted ranges, truncations, splices of two models), must load or throw
// sluice::Error, never crash or throw anything else; models that still load also run on the NULL device
// with inputs of their declared shapes, which must succeed or throw sluice::Error. Deterministic (seeded).
// CI runs a few thousand inputs; under the asan preset, SLUICE_FUZZ_ITERS=100000 runs the full campaign:
//   SLUICE_FUZZ_ITERS=100000 build/asan/tests/onnx/onnx_fuzz_tests
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/error.h"
#include "frontend/onnx/backend_suite.h"
#include "frontend/onnx/model.h"

namespace sluice::onnx {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

void mutate(std::vector<std::byte>& b, const std::vector<std::byte>& other, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t(0) : size_t(rng() % n); };
  const int edits = 1 + int(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 7) {
      case 0:  // flip a bit
        if (!b.empty()) b[pick(b.size())] ^= std::byte(1u << (rng() % 8));
        break;
      case 1: {  // an interesting byte
        static const uint8_t kBytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x08, 0x10, 0x1a, 0x22};
        if (!b.empty()) b[pick(b.size())] = std::byte(kBytes[rng() % std::size(kBytes)]);
        break;
      }
      case 2: {  // delete a range
        const size_t at = pick(b.size()), n = std::min(b.size() - at, size_t(1 + rng() % 16));
        b.erase(b.begin() + ptrdiff_t(at), b.begin() + ptrdiff_t(at + n));
        break;
      }
      case 3: {  // duplicate a range
        if (b.empty()) break;
        const size_t at = pick(b.size()), n = std::min(b.size() - at, size_t(1 + rng() % 32));
        std::vector<std::byte> dup(b.begin() + ptrdiff_t(at), b.begin() + ptrdiff_t(at + n));
        b.insert(b.begin() + ptrdiff_t(pick(b.size())), dup.begin(), dup.end());
        break;
      }
      case 4: {  // insert random bytes
        const size_t n = 1 + rng() % 8, at = pick(b.size() + 1);
        for (size_t k = 0; k < n; ++k) b.insert(b.begin() + ptrdiff_t(at), std::byte(rng() & 0xff));
        break;
      }
      case 5:  // truncate
        b.resize(pick(b.size() + 1));
        break;
      default: {  // splice: a prefix of this one, a suffix of the other
        const size_t a = pick(b.size() + 1), o = pick(other.size() + 1);
        b.resize(a);
        b.insert(b.end(), other.begin() + ptrdiff_t(o), other.end());
      }
    }
  }
}

// Runs the model on NULL with zero inputs of its declared shapes, when they are all known and small.
void run_on_null(Model& m) {
  std::map<std::string, Value> in;
  for (const ValueInfo& i : m.inputs()) {
    if (i.kind != ValueInfo::Kind::Tensor || !i.has_shape) return;
    Shape s;
    for (const Dim& d : i.shape) {
      if (d.size < 0 || d.size > 64) return;
      s.push_back(d.size);
    }
    if (prod(s) > 4096) return;
    in[i.name] = Tensor::zeros(s, i.known_dtype ? i.dtype : dtypes::float32, "NULL");
  }
  m.run(in);
}

TEST(OnnxFuzz, MutatedModelsLoadOrFailWithAClearError) {
  const std::string root = suite::data_dir();
  if (root.empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  std::vector<std::vector<std::byte>> seeds;
  for (const suite::Case& c : suite::list_cases(root, "onnx/node/*")) seeds.push_back(read_bytes(fs::path(c.dir) / "model.onnx"));
  ASSERT_GT(seeds.size(), 100u);
  const char* env = std::getenv("SLUICE_FUZZ_ITERS");
  const long iters = env ? std::atol(env) : 3000;
  std::mt19937_64 rng(20261124);
  long loaded = 0, ran = 0, rejected = 0;
  for (long i = 0; i < iters; ++i) {
    std::vector<std::byte> b = seeds[rng() % seeds.size()];
    mutate(b, seeds[rng() % seeds.size()], rng);
    try {
      Model m = Model::from_bytes(b, "fuzz.onnx", "", {.device = "NULL"});
      ++loaded;
      run_on_null(m);
      ++ran;
    } catch (const Error&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "input " << i << ": " << typeid(e).name() << " instead of sluice::Error: " << e.what();
    }
  }
  std::printf("onnx fuzz: %ld inputs, %ld loaded, %ld ran on NULL, %ld rejected with sluice::Error\n", iters, loaded,
              ran, rejected);
}

}  // namespace
}  // namespace sluice::onnx
