// Offline attribution of replayed CUDA graph work to capture-time NVTX ranges (see
// graph_ranges.hpp for the rule).
#include "graph_ranges.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace nvtxpp::capture {

namespace {

namespace rec = nvtxpp::recording;

/// A push/pop range that contains at least one node creation.
struct kept_range {
  std::uint64_t tid = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::string name;
  std::uint32_t domain = 0;
  std::string domain_name;
  bool has_color = false;
  std::uint32_t color = 0;
};

struct node_state {
  std::uint32_t graph = 0;
  bool created = false;
  std::size_t creation = 0;    ///< index into creations (created nodes)
  std::uint64_t original = 0;  ///< cloned nodes: the node copied
  std::vector<std::pair<std::int64_t, std::uint64_t>> updates;  ///< (ns, node) in time order
};

struct creation {
  std::uint64_t tid = 0;
  std::int64_t ns = 0;
  std::vector<std::size_t> ranges;  ///< kept_range indices
};

struct work {
  graph_ranges::work_kind kind{};
  std::uint64_t node = 0;
  std::uint32_t graph = 0;
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::uint32_t correlation = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

/// CUgraphNodeType's CU_GRAPH_NODE_TYPE_GRAPH (a child-graph node).
constexpr std::uint32_t child_graph_type = 4;

/// Nodes visited to resolve one node's ranges, at most (clone, update and child links; a damaged
/// file could make a cycle).
constexpr int max_steps = 256;

}  // namespace

struct graph_ranges::impl {
  std::unordered_map<std::uint64_t, node_state> nodes;
  std::unordered_map<std::uint32_t, std::uint64_t> child_node_of_graph;  ///< embedded graph -> node
  std::vector<creation> creations;
  std::unordered_map<std::uint64_t, std::vector<std::pair<std::int64_t, std::size_t>>> by_tid;
  bool sorted = false;
  std::vector<kept_range> ranges;
  std::vector<work> works;
  std::unordered_map<std::uint32_t, std::int64_t> launch_ns;  ///< correlation -> API call start
  bool any_updates = false;
  /// A node being added on a thread: from its `starting` to its `created`, or from a driver
  /// call's `call_enter` to its `call_exit`; the graphs cloned meanwhile are the embedded graph
  /// of the child-graph node created. They nest (a driver call around a `starting`).
  struct adding_node {
    bool call = false;       ///< opened by `call_enter` (closed by `call_exit`)
    std::uint64_t node = 0;  ///< the child-graph node: named by its `starting`, or once created
    bool named = false;      ///< `node` came with the `starting` (else: the next `created` ends it)
    std::vector<std::uint32_t> graphs;
  };
  std::unordered_map<std::uint64_t, std::vector<adding_node>>
      adding;  ///< by thread, innermost last

  /// Executable graphs flatten their child graphs: CUDA 13 runs a child graph's nodes as nodes
  /// of the executable graph that no event names, numbered after the graph's own nodes, child
  /// node by child node (in node order), each child's nodes in their order (seen on an H100;
  /// node ids are graph id << 32 | index). alias: such a node -> the embedded node it runs.
  std::unordered_map<std::uint64_t, std::uint64_t> alias;
  bool aliases_built = false;

  void build_aliases() {
    aliases_built = true;
    std::unordered_map<std::uint32_t, std::vector<std::uint64_t>> cloned_by_graph;
    for (auto const& [id, n] : nodes) {
      if (n.original != 0) {
        cloned_by_graph[n.graph].push_back(id);
      }
    }
    std::unordered_map<std::uint64_t, std::uint32_t> embedded_of;  // child node -> its graph
    for (auto const& [graph, node] : child_node_of_graph) {
      embedded_of.emplace(node, graph);
    }
    for (auto& [graph, own] : cloned_by_graph) {
      std::sort(own.begin(), own.end());
      std::uint64_t next = (static_cast<std::uint64_t>(graph) << 32) | own.size();
      for (std::uint64_t child : own) {
        auto const e = embedded_of.find(child);
        if (e == embedded_of.end()) {
          continue;
        }
        auto const inner = cloned_by_graph.find(e->second);
        if (inner == cloned_by_graph.end()) {
          continue;
        }
        std::vector<std::uint64_t> list = inner->second;
        std::sort(list.begin(), list.end());
        for (std::uint64_t n : list) {
          if (nodes.find(next) == nodes.end()) {
            alias.emplace(next, n);
          }
          ++next;
        }
      }
    }
  }

  void embed(adding_node const& a) {
    for (std::uint32_t g : a.graphs) {
      child_node_of_graph.try_emplace(g, a.node);
    }
  }

  void sort_creations() {
    if (!sorted) {
      for (auto& entry : by_tid) {
        std::sort(entry.second.begin(), entry.second.end());
      }
      sorted = true;
    }
  }

  /// The ranges of `node` for a launch at `t`, outer first, appended to `out` (duplicates
  /// removed by the caller).
  void ranges_of(std::uint64_t node, std::int64_t t, int& budget, std::vector<std::size_t>& out,
                 bool& known) const {
    if (--budget < 0) {
      return;  // a cycle or an absurd depth (a damaged file): stop
    }
    auto const it = nodes.find(node);
    if (it == nodes.end()) {
      if (auto const a = alias.find(node); a != alias.end()) {
        ranges_of(a->second, t, budget, out, known);  // a flattened child-graph node
      }
      return;
    }
    node_state const& n = it->second;
    // Outer: the child-graph node that embeds this node's graph.
    if (auto const c = child_node_of_graph.find(n.graph);
        c != child_node_of_graph.end() && c->second != node) {
      bool outer_known = false;
      ranges_of(c->second, t, budget, out, outer_known);
    }
    // Own: the latest update before the launch, else the original, else the creation.
    std::uint64_t from = 0;
    for (auto const& [ns, source] : n.updates) {
      if (ns <= t) {
        from = source;
      }
    }
    if (from == 0) {
      from = n.original;
    }
    if (from != 0 && from != node) {
      ranges_of(from, t, budget, out, known);
    } else if (n.created) {
      known = true;
      auto const& c = creations[n.creation].ranges;
      out.insert(out.end(), c.begin(), c.end());
    }
  }

  // finish() -------------------------------------------------------------------------------

  std::unordered_map<std::uint64_t, std::vector<std::size_t>> memo;  ///< per node (no updates)
  std::unordered_set<std::uint64_t> unknown;  ///< nodes whose creation was not recorded
  std::vector<std::size_t> scratch;

  /// Each creation's ranges, outer first: open at one instant on one thread, they nest, so the
  /// earlier start is the outer one (equal starts: the longer one).
  void sort_creation_ranges() {
    for (auto& c : creations) {
      std::sort(c.ranges.begin(), c.ranges.end(), [&](std::size_t a, std::size_t b) {
        auto const& x = ranges[a];
        auto const& y = ranges[b];
        return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.end_ns > y.end_ns;
      });
    }
  }

  /// The ranges of `node` for a launch at `t`, outer first, each once.
  std::vector<std::size_t> const& resolved(std::uint64_t node, std::int64_t t) {
    if (!aliases_built) {
      build_aliases();
    }
    if (!any_updates) {
      if (auto const m = memo.find(node); m != memo.end()) {
        return m->second;
      }
    }
    std::vector<std::size_t> chain;
    bool known = false;
    int budget = max_steps;
    ranges_of(node, t, budget, chain, known);
    if (!known) {
      unknown.insert(node);
    }
    // Duplicates (a range holding both a child node and its graph's nodes): the first.
    scratch.clear();
    for (std::size_t r : chain) {
      if (std::find(scratch.begin(), scratch.end(), r) == scratch.end()) {
        scratch.push_back(r);
      }
    }
    return any_updates ? scratch : memo.emplace(node, scratch).first->second;
  }

  /// One instance per range of the launch whose work is works[i, j).
  void add_launch(std::uint32_t pid, std::size_t i, std::size_t j,
                  std::vector<graph_range_info>& out) {
    std::int64_t t = works[i].start_ns;
    if (auto const l = launch_ns.find(works[i].correlation); l != launch_ns.end()) {
      t = l->second;
    }
    std::map<std::size_t, std::size_t> slot;  // kept range -> index in out
    for (std::size_t k = i; k < j; ++k) {
      work const& w = works[k];
      std::vector<std::size_t> const& list = resolved(w.node, t);
      for (std::size_t depth = 0; depth < list.size(); ++depth) {
        auto [s, fresh] = slot.try_emplace(list[depth], out.size());
        if (fresh) {
          out.push_back(instance(pid, ranges[list[depth]], w, static_cast<int>(depth)));
        }
        graph_range_info& g = out[s->second];
        if (w.start_ns < g.start_ns) {  // works are in start order; kept for safety
          g.start_ns = w.start_ns;
          g.device = w.device;
          g.context = w.context;
          g.stream = w.stream;
        }
        g.end_ns = std::max(g.end_ns, w.end_ns);
        g.depth = std::min(g.depth, static_cast<int>(depth));
        g.busy_ns += w.end_ns - w.start_ns;
        g.kernels += w.kind == work_kind::kernel ? 1U : 0U;
        g.memcpys += w.kind == work_kind::memcpy ? 1U : 0U;
        g.memsets += w.kind == work_kind::memset ? 1U : 0U;
      }
    }
  }

  /// A range's instance started by its first work `w` (counts added by the caller).
  static graph_range_info instance(std::uint32_t pid, kept_range const& kr, work const& w,
                                   int depth) {
    graph_range_info g;
    g.pid = pid;
    g.device = w.device;
    g.context = w.context;
    g.stream = w.stream;
    g.start_ns = w.start_ns;
    g.end_ns = w.end_ns;
    g.correlation = w.correlation;
    g.graph = w.graph;
    g.depth = depth;
    g.tid = kr.tid;
    g.cpu_start_ns = kr.start_ns;
    g.cpu_end_ns = kr.end_ns;
    g.name = kr.name;
    g.domain = kr.domain;
    g.domain_name = kr.domain_name;
    g.has_color = kr.has_color;
    g.color = kr.color;
    return g;
  }

  /// Launches numbered 1, 2, ... by their first work's start; instances put in start order.
  static void number_launches(std::vector<graph_range_info>& out) {
    std::map<std::uint32_t, std::int64_t> first;
    for (auto const& g : out) {
      auto [it, fresh] = first.try_emplace(g.correlation, g.start_ns);
      if (!fresh) {
        it->second = std::min(it->second, g.start_ns);
      }
    }
    std::vector<std::pair<std::int64_t, std::uint32_t>> order;
    order.reserve(first.size());
    for (auto const& [corr, ns] : first) {
      order.emplace_back(ns, corr);
    }
    std::sort(order.begin(), order.end());
    std::unordered_map<std::uint32_t, std::uint64_t> number;
    for (std::size_t k = 0; k < order.size(); ++k) {
      number[order[k].second] = k + 1;
    }
    for (auto& g : out) {
      g.launch = number[g.correlation];
    }
    std::stable_sort(out.begin(), out.end(), [](auto const& a, auto const& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.depth < b.depth;
    });
  }
};

graph_ranges::graph_ranges() : d_{std::make_unique<impl>()} {}
graph_ranges::~graph_ranges() = default;

void graph_ranges::on_node_event(rec::gpu_graph_node const& e, std::int64_t ns) {
  auto const event = static_cast<rec::graph_event>(e.event);
  bool const bracket = event == rec::graph_event::starting ||
                       event == rec::graph_event::call_enter ||
                       event == rec::graph_event::call_exit;
  if (e.node == 0 && !bracket) {
    return;
  }
  switch (event) {
    case rec::graph_event::starting:
      d_->adding[e.tid].push_back({false, e.node, e.node != 0, {}});
      return;
    case rec::graph_event::call_enter:
      d_->adding[e.tid].push_back({true, 0, false, {}});
      return;
    case rec::graph_event::call_exit:
      if (auto const a = d_->adding.find(e.tid); a != d_->adding.end()) {
        auto& stack = a->second;
        // Close the call and whatever it left open (a `starting` without its `created`).
        while (!stack.empty()) {
          bool const call = stack.back().call;
          if (stack.back().node != 0) {
            d_->embed(stack.back());
          }
          stack.pop_back();
          if (call) {
            break;
          }
        }
      }
      return;
    case rec::graph_event::created: {
      // A child-graph node: the graphs cloned while it was being added are its embedded graph
      // (in a driver call, CUDA may copy the child graph after creating the node: at the exit).
      if (auto const a = d_->adding.find(e.tid); a != d_->adding.end() && !a->second.empty()) {
        auto& stack = a->second;
        if (stack.back().call) {
          if (e.node_type == child_graph_type) {
            stack.back().node = e.node;
          }
        } else if (!stack.back().named) {
          // Unnamed (no node id at its `starting`): the next node created is the one.
          if (e.node_type == child_graph_type) {
            stack.back().node = e.node;
            d_->embed(stack.back());
          }
          stack.pop_back();
        } else {
          // The `starting` that named this node, and any above it that were never created; a
          // node created inside it (the embedded graph's own) leaves it open.
          for (std::size_t k = stack.size(); k-- > 0 && !stack[k].call;) {
            if (stack[k].named && stack[k].node == e.node) {
              d_->embed(stack[k]);
              stack.resize(k);
              break;
            }
          }
        }
      }
      node_state& n = d_->nodes[e.node];
      n.graph = e.graph;
      n.created = true;
      n.creation = d_->creations.size();
      d_->creations.push_back({e.tid, ns, {}});
      d_->by_tid[e.tid].emplace_back(ns, n.creation);
      d_->sorted = false;
      break;
    }
    case rec::graph_event::cloned: {
      if (auto const a = d_->adding.find(e.tid);
          a != d_->adding.end() && !a->second.empty() && e.graph != 0) {
        a->second.back().graphs.push_back(e.graph);
      }
      node_state& n = d_->nodes[e.node];
      n.graph = e.graph;
      n.original = e.original;
      break;
    }
    case rec::graph_event::updated:
      if (e.original != 0) {
        // The executable graph's node is the clone; the node it now runs is a created one.
        // Read either way round, whichever order CUPTI gives the two.
        std::uint64_t exec_node = e.node;
        std::uint64_t source = e.original;
        auto const a = d_->nodes.find(e.node);
        auto const b = d_->nodes.find(e.original);
        if (a != d_->nodes.end() && b != d_->nodes.end() && a->second.original == 0 &&
            b->second.original != 0) {
          std::swap(exec_node, source);
        }
        d_->nodes[exec_node].updates.emplace_back(ns, source);
        d_->any_updates = true;
      }
      break;
    case rec::graph_event::child:
      if (e.graph != 0) {
        d_->child_node_of_graph[e.graph] = e.node;
      }
      break;
  }
}

void graph_ranges::on_work(work_kind kind, std::uint64_t node, std::uint32_t graph,
                           std::uint32_t device, std::uint32_t context, std::uint32_t stream,
                           std::uint32_t correlation, std::int64_t start_ns, std::int64_t end_ns) {
  d_->works.push_back({kind, node, graph, device, context, stream, correlation, start_ns, end_ns});
}

void graph_ranges::on_api(rec::gpu_api const& a) {
  // Graph launches only (cudaGraphLaunch, its per-thread variant; cuGraphLaunch, ditto).
  bool const runtime = a.kind == static_cast<std::uint32_t>(rec::gpu_api_kind::runtime);
  if ((runtime && (a.cbid == 311 || a.cbid == 312)) ||
      (!runtime && (a.cbid == 514 || a.cbid == 515))) {
    auto [it, fresh] = d_->launch_ns.try_emplace(a.correlation, a.start);
    if (!fresh) {
      it->second = std::min(it->second, a.start);
    }
  }
}

void graph_ranges::on_range(range_info const& r) {
  if (r.style != range_style::push_pop || d_->by_tid.empty()) {
    return;
  }
  auto const it = d_->by_tid.find(r.tid);
  if (it == d_->by_tid.end()) {
    return;
  }
  d_->sort_creations();
  auto const& list = it->second;
  auto at = std::lower_bound(list.begin(), list.end(),
                             std::pair<std::int64_t, std::size_t>{r.start_ns, 0});
  std::size_t kept = std::numeric_limits<std::size_t>::max();
  for (; at != list.end() && at->first <= r.end_ns; ++at) {
    if (kept == std::numeric_limits<std::size_t>::max()) {
      kept = d_->ranges.size();
      d_->ranges.push_back({r.tid, r.start_ns, r.end_ns, std::string{r.name}, r.attr.domain,
                            std::string{r.attr.domain_name}, r.attr.has_color, r.attr.color});
    }
    d_->creations[at->second].ranges.push_back(kept);
  }
}

void graph_ranges::finish(std::uint32_t pid,
                          std::function<void(graph_range_info const&)> const& emit,
                          std::function<void(std::string)> const& warn) {
  impl& d = *d_;
  if (d.nodes.empty()) {  // no graph node events (NVTXPP_GRAPH_NODES=off, or no graphs)
    d_ = std::make_unique<impl>();
    return;
  }
  d.sort_creation_ranges();
  // Launches: the work of one graph launch shares its correlation id.
  std::sort(d.works.begin(), d.works.end(), [](work const& a, work const& b) {
    return a.correlation != b.correlation ? a.correlation < b.correlation : a.start_ns < b.start_ns;
  });
  std::vector<graph_range_info> out;
  for (std::size_t i = 0; i < d.works.size();) {
    std::size_t j = i;
    while (j < d.works.size() && d.works[j].correlation == d.works[i].correlation) {
      ++j;
    }
    d.add_launch(pid, i, j, out);
    i = j;
  }
  impl::number_launches(out);
  if (!d.unknown.empty()) {
    warn(
        fmt::format("pid {}: GPU work of {} CUDA graph node(s) whose creation was not recorded "
                    "(created before CUPTI was loaded, or on the device): under no "
                    "capture-time range",
                    pid, d.unknown.size()));
  }
  for (auto const& g : out) {
    emit(g);
  }
  d_ = std::make_unique<impl>();
}

}  // namespace nvtxpp::capture
