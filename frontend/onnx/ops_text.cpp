// ONNX ops: text features over token ids, TfIdfVectorizer (op.h). Strings have no sluice dtype, so the
// pool must be integers (pool_int64s) and the input int32 or int64 token ids.
#include <limits>
#include <map>

#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

// The pool's n-grams of one length, each with the output coordinate it counts into.
struct Grams {
  int64_t n = 0;
  std::vector<std::vector<int64_t>> items;
  std::vector<int64_t> out;
};

// The pool's n-grams of the lengths in [min_n, max_n]. Grams are numbered across the whole pool (lengths
// outside the range use up their numbers too) and gram k counts into ngram_indexes[k]. A gram the pool
// holds twice counts once, into the coordinate of its last copy, as the reference's n-gram map does.
std::vector<Grams> pool_grams(OpContext& c, int64_t min_n, int64_t max_n) {
  const std::vector<int64_t> pool = c.attr_ints("pool_int64s", {});
  const std::vector<int64_t> starts = c.attr_ints("ngram_counts");
  const std::vector<int64_t> indexes = c.attr_ints("ngram_indexes");
  std::vector<Grams> out;
  int64_t id = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t n = int64_t(i) + 1, begin = starts[i];
    const int64_t end = i + 1 < starts.size() ? starts[i + 1] : int64_t(pool.size());
    SLUICE_CHECK_IN(ValueError, c.op(), 0 <= begin && begin <= end && end <= int64_t(pool.size()))
        << "ngram_counts[" << i << "] = " << begin << " does not start a run of the pool's " << pool.size()
        << " items";
    const int64_t count = (end - begin) / n;
    if (n < min_n || n > max_n) {
      id += count;
      continue;
    }
    std::map<std::vector<int64_t>, int64_t> last;  // gram -> its output coordinate
    for (int64_t k = 0; k < count; ++k, ++id) {
      SLUICE_CHECK_IN(ValueError, c.op(), id < int64_t(indexes.size()))
          << "the pool has more n-grams than ngram_indexes' " << indexes.size() << " entries";
      SLUICE_CHECK_IN(ValueError, c.op(), indexes[size_t(id)] >= 0)
          << "ngram_indexes[" << id << "] = " << indexes[size_t(id)] << " is negative";
      const auto first = pool.begin() + begin + k * n;
      last[std::vector<int64_t>(first, first + n)] = indexes[size_t(id)];
    }
    Grams g;
    g.n = n;
    for (const auto& [gram, o] : last) g.items.push_back(gram), g.out.push_back(o);
    if (!g.items.empty()) out.push_back(std::move(g));
  }
  return out;
}

// How often each gram occurs in each row of x (N, C) as x[s], x[s+d], ..., x[s+(n-1)d], for every skip
// distance d in [1, max_skip + 1] (unigrams once, whatever the distance): the windows compare with the
// grams' j-th items, j by j, and the matches of all n multiply. Gives (N, G) int32.
Tensor count_grams(const Tensor& x, const Grams& g, int64_t max_skip, const std::string& device) {
  const int64_t rows = x.shape(0), cols = x.shape(1), grams = int64_t(g.items.size());
  Tensor counts = Tensor::zeros({rows, grams}, dtypes::int32, device);
  for (int64_t d = 1; d <= (g.n == 1 ? 1 : max_skip + 1); ++d) {
    const int64_t starts = cols - d * (g.n - 1);
    if (starts <= 0) break;
    std::optional<Tensor> match;
    for (int64_t j = 0; j < g.n; ++j) {
      std::vector<int64_t> item(size_t(grams), 0);
      for (int64_t k = 0; k < grams; ++k) item[size_t(k)] = g.items[size_t(k)][size_t(j)];
      Tensor want = Tensor::from(item, {1, 1, grams}, device).cast(x.dtype());
      Tensor window = x.slice({{}, {j * d, j * d + starts}}).unsqueeze(2);  // (N, S, 1)
      Tensor eq = window.eq(want).cast(dtypes::int32);                      // (N, S, G)
      match = match ? *match * eq : eq;
    }
    counts = counts + match->sum({1}).cast(dtypes::int32);
  }
  return counts;
}

// mode TF: the counts; IDF: weights[o] where a count is nonzero (1 without weights); TFIDF: count *
// weights[o]. Weights are read by output coordinate o, as the reference implementation and ONNX Runtime
// read them.
Values x_tfidf(OpContext& c) {
  const Tensor& x = c.in(0);
  SLUICE_CHECK_IN(ValueError, c.op(), !c.has_attr("pool_strings") || c.has_attr("pool_int64s"))
      << "the pool is strings (pool_strings), which need string inputs: sluice has no string dtype";
  SLUICE_CHECK_IN(DTypeError, c.op(), x.dtype() == dtypes::int32 || x.dtype() == dtypes::int64)
      << "input must be int32 or int64 token ids, got " << x.str();
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() == 1 || x.ndim() == 2)
      << "input must be (C) or (N, C), got " << x.str();
  const std::string mode = c.attr_str("mode");
  SLUICE_CHECK_IN(ValueError, c.op(), mode == "TF" || mode == "IDF" || mode == "TFIDF")
      << "mode must be TF, IDF or TFIDF, got '" << mode << "'";
  const int64_t min_n = c.attr_int("min_gram_length"), max_n = c.attr_int("max_gram_length");
  const int64_t max_skip = c.attr_int("max_skip_count");
  SLUICE_CHECK_IN(ValueError, c.op(), 1 <= min_n && min_n <= max_n && max_skip >= 0)
      << "bad gram lengths [" << min_n << ", " << max_n << "] or max_skip_count " << max_skip;
  const std::vector<int64_t> indexes = c.attr_ints("ngram_indexes");
  SLUICE_CHECK_IN(ValueError, c.op(), !indexes.empty()) << "ngram_indexes is empty";
  const int64_t out_size = *std::max_element(indexes.begin(), indexes.end()) + 1;

  const Tensor rows = x.ndim() == 1 ? x.unsqueeze(0) : x;
  const int64_t n_rows = rows.shape(0);
  Tensor y = Tensor::zeros({n_rows, out_size}, dtypes::float32, c.device());
  for (Grams& g : pool_grams(c, min_n, max_n)) {
    // A gram with an item the input's dtype cannot hold never matches.
    for (size_t k = g.items.size(); k-- > 0;) {
      bool fits = true;
      for (int64_t v : g.items[k]) fits &= double(v) >= x.dtype().min() && double(v) <= x.dtype().max();
      if (!fits) g.items.erase(g.items.begin() + long(k)), g.out.erase(g.out.begin() + long(k));
    }
    if (g.items.empty() || rows.numel() == 0) continue;
    // (G, O), gram k -> coordinate g.out[k], as a lazy one-hot: nothing of size O is made on the host.
    const int64_t grams = int64_t(g.out.size());
    Tensor coords = out_size <= std::numeric_limits<int32_t>::max()
                        ? Tensor::from(std::vector<int32_t>(g.out.begin(), g.out.end()), {grams}, c.device())
                        : c.tensor_of(g.out);
    Tensor to_out = coords.one_hot(out_size).cast(dtypes::float32);
    y = y + count_grams(rows, g, max_skip, c.device()).cast(dtypes::float32).matmul(to_out);
  }
  const std::vector<double> weights = c.attr_floats("weights", {});
  SLUICE_CHECK_IN(ValueError, c.op(), weights.empty() || int64_t(weights.size()) >= out_size)
      << "weights has " << weights.size() << " entries for " << out_size << " output coordinates";
  std::vector<float> w(weights.begin(),
                       weights.begin() + long(std::min<size_t>(weights.size(), size_t(out_size))));
  if (mode == "IDF") {
    y = weights.empty() ? y.gt(0).cast(dtypes::float32)
                        : y.gt(0).where(Tensor::from(w, {out_size}, c.device()), 0);
  } else if (mode == "TFIDF" && !weights.empty()) {
    y = y * Tensor::from(w, {out_size}, c.device());
  }
  return {x.ndim() == 1 ? y.reshape({out_size}) : y};
}

const OpDef kOps[] = {
    {"TfIdfVectorizer", 9, x_tfidf},
};

}  // namespace

std::span<const OpDef> text_ops() { return kOps; }

}  // namespace sluice::onnx
