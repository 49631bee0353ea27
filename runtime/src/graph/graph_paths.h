// graph_paths.h - the call paths of graph mode: Trace runs the program
// without touching the device (it learns its allocations, their lifetimes
// and its operations); Replay runs it against the plan (planned memory,
// work collected for the graph, compared with what was traced).
#pragma once

#include <memory>

#include "base/call_path.h"

namespace hj {

class GraphCache;
struct GraphRoom;

std::unique_ptr<CallPath> makeTracePath(GraphCache &graphs, const GraphRoom &room);
std::unique_ptr<CallPath> makeReplayPath(GraphCache &graphs, const GraphRoom &room);

}  // namespace hj
