// Linear algebra: dot/matmul and einsum, as broadcast multiplies summed over the contracted axes (one
// reduce kernel each, which the scheduler fuses with elementwise producers and consumers).
#include <algorithm>
#include <map>

#include "runtime/tensor_internal.h"

namespace sluice {

using detail::OpScope;

namespace {
// x (..., m, k) @ w (..., k, n): x as (..., m, 1, k) times w as (..., 1, n, k), summed over k. 1-d operands
// lose their axis in the result as numpy does.
Tensor dot_impl(const char* name, const Tensor& x, const Tensor& w, std::optional<DType> acc_dtype) {
  OpScope scope(name);
  int64_t dx = x.ndim(), dw = w.ndim();
  SLUICE_CHECK_IN(ShapeError, name, dx > 0 && dw > 0)
      << "both tensors need at least 1 dimension: " << tuple_str(x.shape()) << " @ " << tuple_str(w.shape());
  int64_t axis_w = dw - std::min<int64_t>(dw, 2);
  SLUICE_CHECK_IN(ShapeError, name, x.shape().back() == w.shape()[size_t(axis_w)])
      << "inner dimensions differ: " << tuple_str(x.shape()) << " @ " << tuple_str(w.shape());
  int64_t ones = std::min<int64_t>({dx - 1, dw - 1, 1});
  Shape xs(x.shape().begin(), x.shape().end() - 1),
      ws(w.shape().begin(), w.shape().begin() + std::max<int64_t>(dw - 2, 0));
  xs.insert(xs.end(), size_t(ones), 1), ws.insert(ws.end(), size_t(ones), 1);
  xs.push_back(x.shape().back());
  ws.insert(ws.end(), w.shape().begin() + axis_w, w.shape().end());
  Tensor wt = w.reshape(ws).transpose(-1, axis_w - dw);
  Tensor r = (x.reshape(xs) * wt).sum({-1}, false, acc_dtype);
  return r.cast(acc_dtype.value_or(least_upper_dtype({x.dtype(), w.dtype()})));
}
}  // namespace

Tensor Tensor::dot(const Tensor& w, std::optional<DType> acc_dtype) const {
  return dot_impl("dot", *this, w, acc_dtype);
}
Tensor Tensor::matmul(const Tensor& w, std::optional<DType> acc_dtype) const {
  return dot_impl("matmul", *this, w, acc_dtype);
}

// Every operand is permuted to the letters' sorted order and broadcast over all letters; the product is
// summed over the letters missing from the output, then permuted to the output's order.
Tensor Tensor::einsum(const std::string& formula, const std::vector<Tensor>& xs) {
  OpScope scope("einsum");
  std::string f;
  std::copy_if(formula.begin(), formula.end(), std::back_inserter(f), [](char c) { return c != ' '; });
  size_t arrow = f.find("->");
  std::string lhs = f.substr(0, arrow);
  std::vector<std::string> inputs(1);
  for (char c : lhs) {
    if (c == ',')
      inputs.emplace_back();
    else
      inputs.back().push_back(c);
  }
  SLUICE_CHECK_IN(ValueError, "einsum", inputs.size() == xs.size())
      << "\"" << formula << "\" has " << inputs.size() << " operands, got " << xs.size() << " tensors";
  // "..." stands for the leading axes; it becomes letters the formula does not use, aligned from the right.
  std::string spare;
  for (char c = 'A'; c <= 'Z'; c++)
    if (f.find(c) == std::string::npos) spare.push_back(c);
  size_t longest = 0;
  for (size_t i = 0; i < inputs.size(); i++) {
    size_t at = inputs[i].find("...");
    if (at == std::string::npos) continue;
    int64_t n = xs[i].ndim() - int64_t(inputs[i].size() - 3);
    SLUICE_CHECK_IN(ShapeError, "einsum", n >= 0 && size_t(n) <= spare.size())
        << "operand " << i << " \"" << inputs[i] << "\" does not fit " << tuple_str(xs[i].shape());
    inputs[i].replace(at, 3, spare.substr(spare.size() - size_t(n)));
    longest = std::max(longest, size_t(n));
  }
  std::string ellipsis = spare.substr(spare.size() - longest);
  std::map<char, int64_t> size;  // sorted by letter
  for (size_t i = 0; i < inputs.size(); i++) {
    const std::string& in = inputs[i];
    SLUICE_CHECK_IN(ShapeError, "einsum", int64_t(in.size()) == xs[i].ndim())
        << "operand " << i << " \"" << in << "\" does not match " << tuple_str(xs[i].shape());
    for (size_t j = 0; j < in.size(); j++) {
      char c = in[j];
      SLUICE_CHECK_IN(ValueError, "einsum", std::isalpha(static_cast<unsigned char>(c)) && in.find(c) == j)
          << "operand " << i << " \"" << in << "\": letters must be distinct letters (no traces)";
      int64_t s = xs[i].shape()[j];
      auto [it, fresh] = size.emplace(c, s);
      SLUICE_CHECK_IN(ShapeError, "einsum", fresh || it->second == s || it->second == 1 || s == 1)
          << "letter '" << c << "' has sizes " << it->second << " and " << s;
      it->second = std::max(it->second, s);
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = f.substr(arrow + 2);
    if (size_t at = out.find("..."); at != std::string::npos) out.replace(at, 3, ellipsis);
  } else {  // implicit: the ellipsis, then the letters used once, sorted
    out = ellipsis;
    std::string joined;
    for (auto& in : inputs) joined += in;
    for (auto& [c, s] : size)
      if (std::count(joined.begin(), joined.end(), c) == 1 && ellipsis.find(c) == std::string::npos) out += c;
  }
  for (char c : out)
    SLUICE_CHECK_IN(ValueError, "einsum", size.count(c) && std::count(out.begin(), out.end(), c) == 1)
        << "output \"" << out << "\" names '" << c << "', which is not a distinct input letter";
  std::string letters;
  Shape full;
  for (auto& [c, s] : size) letters += c, full.push_back(s);
  std::optional<Tensor> product;
  for (size_t i = 0; i < xs.size(); i++) {
    Shape order(inputs[i].size()), view;
    for (size_t j = 0; j < order.size(); j++) order[j] = int64_t(j);
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return inputs[i][size_t(a)] < inputs[i][size_t(b)]; });
    Tensor x = xs[i].permute(order);
    for (char c : letters) {
      size_t j = inputs[i].find(c);
      view.push_back(j == std::string::npos ? 1 : xs[i].shape()[j]);
    }
    x = x.reshape(view).expand(full);
    product = product ? *product * x : x;
  }
  Shape summed, perm;
  for (size_t j = 0; j < letters.size(); j++)
    if (out.find(letters[j]) == std::string::npos) summed.push_back(int64_t(j));
  Tensor r = summed.empty() ? *product : product->sum(summed);
  std::string kept;
  for (char c : letters)
    if (out.find(c) != std::string::npos) kept += c;
  for (char c : out) perm.push_back(int64_t(kept.find(c)));
  return r.permute(perm);
}

}  // namespace sluice
