#pragma once
// TaskGraph as a Boost.Graph: the graph_traits and free functions of the IncidenceGraph and
// VertexListGraph concepts over TaskGraph's own compressed sparse rows, so Boost.Graph's
// algorithms (topological_sort, depth_first_search, breadth_first_search, ...) run on the
// step's graph directly, without a copy. Vertices are task ids; an edge is a (source,
// target) pair of task ids.
#include <boost/graph/graph_traits.hpp>
#include <boost/iterator/counting_iterator.hpp>
#include <boost/iterator/iterator_facade.hpp>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "trainsim/graph/task_graph.hpp"

namespace trainsim {

struct TaskEdge {
  int source = 0;
  int target = 0;
  friend bool operator==(const TaskEdge&, const TaskEdge&) = default;
};

// The out-edges of one task, in TaskGraph's successor order.
class TaskOutEdgeIterator
    : public boost::iterator_facade<TaskOutEdgeIterator, TaskEdge, std::random_access_iterator_tag, TaskEdge> {
 public:
  TaskOutEdgeIterator() = default;
  TaskOutEdgeIterator(int source, const std::int32_t* at) : source_(source), at_(at) {}

 private:
  friend class boost::iterator_core_access;
  TaskEdge dereference() const { return {source_, *at_}; }
  bool equal(const TaskOutEdgeIterator& o) const { return at_ == o.at_; }
  void increment() { ++at_; }
  void decrement() { --at_; }
  void advance(std::ptrdiff_t n) { at_ += n; }
  std::ptrdiff_t distance_to(const TaskOutEdgeIterator& o) const { return o.at_ - at_; }
  int source_ = 0;
  const std::int32_t* at_ = nullptr;
};

struct TaskGraphTraversal : boost::incidence_graph_tag, boost::vertex_list_graph_tag {};

inline std::pair<TaskOutEdgeIterator, TaskOutEdgeIterator> out_edges(int v, const TaskGraph& g) {
  const auto s = g.successors_of(v);
  return {TaskOutEdgeIterator(v, s.data()), TaskOutEdgeIterator(v, s.data() + s.size())};
}
inline std::size_t out_degree(int v, const TaskGraph& g) { return g.successors_of(v).size(); }
inline int source(const TaskEdge& e, const TaskGraph&) { return e.source; }
inline int target(const TaskEdge& e, const TaskGraph&) { return e.target; }
inline std::pair<boost::counting_iterator<int>, boost::counting_iterator<int>> vertices(const TaskGraph& g) {
  return {boost::counting_iterator<int>(0), boost::counting_iterator<int>(g.num_tasks())};
}
inline std::size_t num_vertices(const TaskGraph& g) { return static_cast<std::size_t>(g.num_tasks()); }

// Task ids in an order where every task comes after all its dependencies
// (boost::topological_sort); throws SimError naming a task on a dependency cycle.
std::vector<int> topological_order(const TaskGraph& graph);

}  // namespace trainsim

namespace boost {
template <>
struct graph_traits<trainsim::TaskGraph> {
  using vertex_descriptor = int;
  using edge_descriptor = trainsim::TaskEdge;
  using directed_category = directed_tag;
  using edge_parallel_category = allow_parallel_edge_tag;
  using traversal_category = trainsim::TaskGraphTraversal;
  using out_edge_iterator = trainsim::TaskOutEdgeIterator;
  using vertex_iterator = counting_iterator<int>;
  using degree_size_type = std::size_t;
  using vertices_size_type = std::size_t;
  using edges_size_type = std::size_t;
  static vertex_descriptor null_vertex() { return -1; }
};
}  // namespace boost
