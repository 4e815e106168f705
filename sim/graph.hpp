// The dependency graph of a Program (Boost.Graph): nodes are ops, edges are host program
// order, stream order, the legacy default stream's implicit synchronisation, event
// record -> wait, GPU work -> the sync that waits for it, `after` lists, and the hand-offs
// between host threads: a queue's put -> the get it feeds (FIFO order), a host_func's flag set
// -> the host_wait that takes it, the op that starts a thread (start_after) -> the thread's first
// op, a thread's last op -> the join that waits for it.
// Bindings are made in issue order, thread by thread; when several host threads share a
// stream or an event, the engine binds them again in simulated time, as CUDA does.
#pragma once
#include <boost/graph/adjacency_list.hpp>
#include <ostream>
#include <vector>

#include "core/program.hpp"
#include "core/timeline.hpp"

namespace hetsim {

struct DepEdge {
    CauseKind kind = CauseKind::None;
};
using DepGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, DepEdge>;

DepGraph build_graph(const Program& pg);

// A cycle among the ops of the tasks form (after lists, stream and thread order), in order;
// empty when there is none.
std::vector<uint32_t> find_cycle(const Program& pg);

// Graphviz DOT: one cluster per host thread and per stream.
void write_dot(std::ostream& out, const Program& pg, const DepGraph& g);

}  // namespace hetsim
