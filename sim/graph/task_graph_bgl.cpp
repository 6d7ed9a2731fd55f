#include "trainsim/graph/task_graph_bgl.hpp"

#include <boost/graph/topological_sort.hpp>
#include <boost/property_map/property_map.hpp>
#include <iterator>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"

namespace trainsim {

std::vector<int> topological_order(const TaskGraph& graph) {
  std::vector<boost::default_color_type> colors(num_vertices(graph));
  std::vector<int> reversed;
  reversed.reserve(colors.size());
  try {
    boost::topological_sort(
        graph, std::back_inserter(reversed),
        boost::color_map(boost::make_iterator_property_map(colors.begin(), boost::typed_identity_property_map<int>())));
  } catch (const boost::not_a_dag&) {
    // The grey tasks are the ones on the depth-first path that closed the cycle.
    int on_cycle = -1;
    for (std::size_t t = 0; t < colors.size() && on_cycle < 0; ++t)
      if (colors[t] == boost::gray_color) on_cycle = static_cast<int>(t);
    throw SimError("task graph: dependency cycle through task " + std::to_string(on_cycle));
  }
  return {reversed.rbegin(), reversed.rend()};
}

}  // namespace trainsim
