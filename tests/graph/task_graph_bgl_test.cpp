// TaskGraph as a Boost.Graph: the concepts hold, and Boost's algorithms run on it.
#include "trainsim/graph/task_graph_bgl.hpp"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/graph_concepts.hpp>
#include <boost/property_map/property_map.hpp>
#include <catch2/catch.hpp>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;

BOOST_CONCEPT_ASSERT((boost::IncidenceGraphConcept<TaskGraph>));
BOOST_CONCEPT_ASSERT((boost::VertexListGraphConcept<TaskGraph>));

namespace {

TaskGraph step_graph(PipelineSchedule schedule, int v) {
  ChunkCosts c;
  c.forward_s = 1e-3;
  c.backward_input_s = 1e-3;
  c.backward_weight_s = 1e-3;
  c.tp_forward_s = 1e-4;
  c.tp_backward_s = 1e-4;
  c.activation_bytes = 1e9;
  c.buckets = {GradBucket{3e8, 1e-4}, GradBucket{1e8, 1e-4}};
  auto costs = uniform_pipeline_costs(schedule, 4, v, 8, c);
  costs.p2p_s = 1e-5;
  for (auto& s : costs.stages) s.optimizer_s = 1e-4;
  return build_task_graph(costs, build_schedule(schedule, 4, 8, v));
}

}  // namespace

TEST_CASE("Every schedule's step graph is acyclic: boost::topological_sort orders each task after its dependencies",
          "[graph][bgl]") {
  for (const auto& [schedule, v] : {std::pair{PipelineSchedule::gpipe, 1}, {PipelineSchedule::one_f_one_b, 1},
                                    {PipelineSchedule::interleaved, 2}, {PipelineSchedule::zero_bubble_h1, 1}}) {
    const TaskGraph g = step_graph(schedule, v);
    const std::vector<int> order = topological_order(g);
    REQUIRE(order.size() == static_cast<std::size_t>(g.num_tasks()));
    std::vector<int> position(order.size(), -1);
    for (std::size_t i = 0; i < order.size(); ++i) position[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
    int edges = 0;
    for (int t = 0; t < g.num_tasks(); ++t) {
      for (auto [e, end] = out_edges(t, g); e != end; ++e) {
        CHECK(position[static_cast<std::size_t>(source(*e, g))] < position[static_cast<std::size_t>(target(*e, g))]);
        ++edges;
      }
    }
    CHECK(edges == g.num_edges());
  }
}

TEST_CASE("A dependency cycle is named by topological_order", "[graph][bgl]") {
  Task t;
  t.duration_s = 1e-3;
  const TaskGraph g = make_task_graph({t, t, t, t}, {{0, 1}, {1, 2}, {2, 3}, {3, 1}});
  CHECK_THROWS_WITH(topological_order(g), Catch::Contains("dependency cycle through task"));
}

TEST_CASE("boost::breadth_first_search from a stage's first forward stays in the stage and reaches its optimizer step",
          "[graph][bgl]") {
  // Edges never cross stages: pipeline transfers meet at a rendezvous (send with receive).
  const TaskGraph g = step_graph(PipelineSchedule::one_f_one_b, 1);
  std::vector<boost::default_color_type> colors(num_vertices(g));
  const auto color = boost::make_iterator_property_map(colors.begin(), boost::typed_identity_property_map<int>());
  REQUIRE(g.task(0).stage == 0);
  REQUIRE(g.task(0).category == SpanCategory::forward);
  boost::breadth_first_search(g, 0, boost::color_map(color));
  int reached = 0;
  bool optimizer_reached = false;
  for (int t = 0; t < g.num_tasks(); ++t) {
    if (colors[static_cast<std::size_t>(t)] == boost::white_color) continue;
    ++reached;
    CHECK(g.task(t).stage == 0);
    optimizer_reached |= g.task(t).category == SpanCategory::optimizer;
  }
  CHECK(reached > 1);
  CHECK(optimizer_reached);
}
