// Realize points and reduce groups (grouping.h): the reference design's group_realizes, over the
// scheduler's graph, with node stamps instead of per-call sets and explicit stacks instead of recursion.
#include "core/schedule/grouping.h"

namespace sluice::sched {

namespace {

// Ops that turn a padded (zero) input into something nonzero: a padded read of them cannot be fused.
bool unsafe_pad(Op op) {
  return op == Op::Recip || op == Op::Log2 || op == Op::Exp2 || op == Op::FDiv || op == Op::IDiv ||
         op == Op::Mod;
}

// A set of nodes as stamps: `mark` is O(1) and `clear` forgets every node at once.
class Marks {
 public:
  explicit Marks(size_t n) : stamp_(n, 0) {}
  void clear() { gen_++; }
  bool has(uint32_t n) const { return stamp_[n] == gen_; }
  bool mark(uint32_t n) {  // false if it was marked already
    if (stamp_[n] == gen_) return false;
    stamp_[n] = gen_;
    return true;
  }

 private:
  std::vector<uint32_t> stamp_;
  uint32_t gen_ = 1;
};

class Grouper {
 public:
  explicit Grouper(Graph& g)
      : g_(g),
        in_group_(g.nodes.size()),
        seen_(g.nodes.size()),
        walked_(g.nodes.size()),
        group_size_(g.nodes.size()) {}

  std::vector<KernelPlan> run() {
    realize_points();
    realize_before_views();
    for (uint32_t r = 0; r < g_.nodes.size(); r++)
      if (g_.nodes[r].live && g_.op(r) == Op::ReduceAxis && !g_.nodes[r].realized) group_reduce(r);
    return form_kernels();
  }

 private:
  Node& node(uint32_t n) { return g_.nodes[n]; }
  bool computed(uint32_t n) { return node(n).kind == Kind::Compute; }

  // Outputs, CONTIGUOUS, ASSIGN and COPY are stored; so is what a COPY copies.
  void realize_points() {
    for (uint32_t o : g_.outputs)
      if (computed(g_.base(o))) node(g_.base(o)).realized = true;
    for (uint32_t n = 0; n < g_.nodes.size(); n++) {
      if (!node(n).live || !computed(n)) continue;
      Op op = g_.op(n);
      if (op == Op::Contiguous || op == Op::Assign || op == Op::Copy) node(n).realized = true;
      if (op == Op::Copy && computed(g_.base(g_.src(n)[0]))) node(g_.base(g_.src(n)[0])).realized = true;
    }
  }

  // Realize before an expand that would recompute the node per element it grows by, and before a padding
  // the node's ops cannot take (the reference design's realize_view).
  void realize_before_views() {
    seen_.clear();
    for (uint32_t b = 0; b < g_.nodes.size(); b++) {
      if (!computed(b)) continue;
      for (const Edge& e : g_.users(b)) {
        if (node(b).realized) break;
        if (e.via != b && seen_.mark(e.via) && must_realize(b, e.via)) node(b).realized = true;
      }
    }
  }

  // An expand realizes b unless b reads no memory: elementwise ops on constants (an arange, a causal mask)
  // cost a few ALU ops per element, less than storing and loading them (the reference design's FUSE_ARANGE).
  bool must_realize(uint32_t b, uint32_t via) {
    const Node& v = node(via);
    int64_t size = node(b).numel;
    if (!v.has_pad) return v.numel > size && !memory_free(b);
    const ShapeTracker& st = st_of(g_.view(via));
    if (st.views.size() == 1 && st.views[0].mask) {  // a plain pad: fine when the ops take it
      int64_t valid = 1;
      for (auto [lo, hi] : *st.views[0].mask) valid *= hi - lo;
      if (size >= valid) return !can_pad(b);
    }
    if (size < st.size() && !memory_free(b)) return true;
    for (const View& w : st.views)
      if (w.mask) return !can_pad(b);
    return false;
  }

  // Elementwise ops whose leaves are all constants (computed once for the graph, sources first).
  bool memory_free(uint32_t b) {
    if (free_.empty()) {
      free_.assign(g_.nodes.size(), 0);
      for (uint32_t n = 0; n < g_.nodes.size(); n++) {
        Op op = g_.op(n);
        if (!computed(n) || !(is_alu(op) || op == Op::Cast || op == Op::Bitcast)) continue;
        bool all = true;
        for (uint32_t s : g_.src(n)) all &= node(g_.base(s)).kind == Kind::Const || free_[g_.base(s)];
        free_[n] = all;
      }
    }
    return free_[b];
  }

  // Whether every op fused under b turns zeros into zeros (the walk stops at realized nodes).
  bool can_pad(uint32_t b) {
    walked_.clear();
    stack_.assign(1, b);
    while (!stack_.empty()) {
      uint32_t p = stack_.back();
      stack_.pop_back();
      if (!walked_.mark(p)) continue;
      if (unsafe_pad(g_.op(p))) return false;
      for (uint32_t s : g_.src(p))
        if (computed(g_.base(s)) && !node(g_.base(s)).realized) stack_.push_back(g_.base(s));
    }
    return true;
  }

  // The view from r's elements to the elements read through `via`, given the view `path` to via's base;
  // null while it is a reshape of r (contiguous, r's size).
  UOp step(const UOp& path, uint32_t via, int64_t rsize) {
    if (node(via).kind != Kind::Movement) return path;
    if (!path && node(via).reshapes) return UOp();
    UOp v = compose(path, g_.view(via));
    const ShapeTracker& st = st_of(v);
    return st.contiguous() && st.size() == rsize ? UOp() : v;
  }

  // Whether y reads x through two different views (then it cannot be fused along one of them).
  bool two_views(std::span<const Edge> same_user) {
    for (const Edge& e : same_user)
      if (e.via != same_user[0].via && !(g_.view(e.via) == g_.view(same_user[0].via))) return true;
    return false;
  }
  // The edges of `us` from position i that have the same user as us[i].
  static std::span<const Edge> run_of(std::span<const Edge> us, size_t i) {
    size_t j = i;
    while (j < us.size() && us[j].user == us[i].user) j++;
    return us.subspan(i, j - i);
  }

  void add(uint32_t n) {
    if (in_group_.mark(n)) members_.push_back(n);
  }

  // The realized nodes r's kernel could store: every path from r through unrealized nodes ends at one,
  // through a reshape of r. A path into another reduce, or through any other view, puts r itself in the
  // group (r must be stored on its own).
  void find_group(uint32_t r) {
    int64_t rsize = node(r).numel;
    work_.assign(1, {r, UOp()});
    while (!work_.empty()) {
      auto [tr, path] = std::move(work_.back());
      work_.pop_back();
      if (!path ? !seen_.mark(tr) : !seen_path(tr, path)) continue;
      if (node(tr).realized && tr != r) {
        if (path) add(r);  // only a reshape of r fuses
        if (node(tr).group != -1) {
          if (joinable(uint32_t(node(tr).group), r))
            shared_ = true;
          else
            add(r);  // one reduce shape per kernel
        }
        add(tr);
        continue;
      }
      auto us = g_.users(tr);
      for (size_t i = 0; i < us.size();) {
        auto same = run_of(us, i);
        if (g_.op(same[0].user) == Op::ReduceAxis || two_views(same)) {
          add(r);
          break;
        }
        work_.push_back({same[0].user, step(path, same[0].via, rsize)});
        i += same.size();
      }
    }
  }
  bool seen_path(uint32_t tr, const UOp& path) {
    for (auto& [n, p] : seen_paths_)
      if (n == tr && p == path) return false;
    seen_paths_.push_back({tr, path});
    return true;
  }

  // Several outputs share r's kernel only when no other reduce feeds them, and none feeds another (the
  // kernel would read what it writes); the reference design walks every ancestor, this prunes the walk
  // to ancestors that have a reduce above them, which are the only ones that can fail it.
  bool isolated(uint32_t r) {
    if (reduce_above_.empty()) {
      reduce_above_.assign(g_.nodes.size(), 0);
      for (uint32_t n = 0; n < g_.nodes.size(); n++)
        for (uint32_t s : g_.src(n)) {
          uint32_t b = g_.base(s);
          reduce_above_[n] |= computed(b) && (g_.op(b) == Op::ReduceAxis || reduce_above_[b]);
        }
    }
    walked_.clear();
    pairs_.clear();
    for (uint32_t m : members_) pairs_.push_back({m, true});
    while (!pairs_.empty()) {
      auto [p, start] = pairs_.back();
      pairs_.pop_back();
      if (!start && in_group_.has(p)) return false;
      if (!walked_.mark(p)) continue;
      if (g_.op(p) == Op::ReduceAxis) return false;
      for (uint32_t s : g_.src(p)) {
        uint32_t b = g_.base(s);
        if (computed(b) && b != r && (reduce_above_[b] || g_.op(b) == Op::ReduceAxis))
          pairs_.push_back({b, false});
      }
    }
    return true;
  }

  // A group that stores into an ASSIGN target must not fuse a read of another ASSIGN.
  bool assign_conflict(uint32_t r) {
    walked_.clear();
    stack_.assign(members_.begin(), members_.end());
    stack_.push_back(r);
    while (!stack_.empty()) {
      uint32_t p = stack_.back();
      stack_.pop_back();
      if (!walked_.mark(p)) continue;
      if (g_.op(p) == Op::Assign && !in_group_.has(p)) return true;
      if (node(p).realized) continue;
      for (uint32_t s : g_.src(p))
        if (computed(g_.base(s))) stack_.push_back(g_.base(s));
    }
    return false;
  }

  // r stored on its own: store the end of the single-user elementwise chain below it instead, as long as
  // that is a reshape of r (sum().sqrt() stores the sqrt), but never a cast to a wider type.
  uint32_t chase(uint32_t r) {
    uint32_t tr = r;
    int64_t rsize = node(r).numel;
    UOp path;
    for (;;) {
      auto us = g_.users(tr);
      if (us.empty() || run_of(us, 0).size() != us.size() || two_views(us)) break;
      uint32_t y = us[0].user;
      if (node(us[0].via).numel != rsize) break;
      path = step(path, us[0].via, rsize);
      if (path || g_.op(y) == Op::ReduceAxis) break;
      tr = y;
    }
    return tr;
  }

  // r may join the kernel of reduce `other` when that kernel stores one node and both reduce the same
  // input shape over the same axes: one loop computes both (one reduction shape per kernel). One stored
  // node keeps it safe: it is below both reduces, so nothing the kernel reads can depend on it.
  bool joinable(uint32_t other, uint32_t r) {
    return group_size_[other] == 1 && g_.shape(g_.src(other)[0]) == g_.shape(g_.src(r)[0]) &&
           g_.nodes[other].u.arg_as<ReduceArg>().axes == g_.nodes[r].u.arg_as<ReduceArg>().axes;
  }

  void group_reduce(uint32_t r) {
    in_group_.clear();
    seen_.clear();
    seen_paths_.clear();
    members_.clear();
    shared_ = false;
    find_group(r);
    bool can_chase = true;
    for (uint32_t m : members_) can_chase &= node(m).group == -1;
    bool forced = in_group_.has(r);
    // More than the shared node: as the reference design, r is stored on its own.
    if (!forced && shared_ && members_.size() > 1) forced = true;
    if (!forced && members_.size() > 1 && !isolated(r)) members_.clear();
    bool writes_assign = false;
    for (uint32_t m : members_) writes_assign |= g_.op(m) == Op::Assign;
    if (!forced && writes_assign && assign_conflict(r)) forced = true, can_chase = false;
    if (!forced && shared_) return;  // r is fused into the kernel that stores its one member
    if (forced || members_.empty()) {
      uint32_t tr = can_chase ? chase(r) : r;
      if (g_.op(tr) == Op::Cast) {
        uint32_t below = g_.base(g_.src(tr)[0]);
        if (g_.nodes[tr].u.dtype().itemsize() > g_.nodes[below].u.dtype().itemsize()) tr = below;
      }
      members_.assign(1, tr);
      node(tr).realized = true;
    }
    for (uint32_t m : members_) node(m).group = int32_t(r);
    group_size_[r] = uint32_t(members_.size());
  }

  std::vector<KernelPlan> form_kernels() {
    std::vector<KernelPlan> plans;
    std::vector<int32_t> of_key(g_.nodes.size(), -1);
    for (uint32_t n = 0; n < g_.nodes.size(); n++) {
      if (!node(n).live || !node(n).realized) continue;
      uint32_t key = node(n).group >= 0 ? uint32_t(node(n).group) : n;
      if (of_key[key] < 0) {
        of_key[key] = int32_t(plans.size());
        plans.push_back({{}, g_.op(key) == Op::ReduceAxis ? int32_t(key) : -1});
      }
      plans[size_t(of_key[key])].stores.push_back(n);
      node(n).kernel = of_key[key];
    }
    return plans;
  }

  Graph& g_;
  Marks in_group_, seen_, walked_;
  std::vector<uint32_t> members_, stack_;
  std::vector<std::pair<uint32_t, UOp>> work_, seen_paths_;
  std::vector<std::pair<uint32_t, bool>> pairs_;
  std::vector<uint8_t> reduce_above_, free_;
  std::vector<uint32_t> group_size_;  // per reduce: how many nodes its kernel stores
  bool shared_ = false;               // find_group reached a node another joinable reduce stores
};

}  // namespace

std::vector<KernelPlan> plan_kernels(Graph& g) { return Grouper(g).run(); }

}  // namespace sluice::sched
