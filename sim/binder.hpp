// The CUDA binding rules, one rule set for the engine (which binds at each op's simulated
// issue time) and the dependency graph of sim/graph.cpp (which binds in issue order): a GPU op
// issued to a stream depends on the stream's last work (stream order); on the legacy default
// stream, on every blocking stream's last work, and on a blocking stream, on the legacy
// stream's (hardware-notes #12); a stream wait on its event's most recent record issued before
// it. The nodes of a launched graph depend on the nodes their graph names (the graph's first
// nodes on the launch), and the stream's last work after the graph is every node that no other
// node waits for: a stream's tail may be several ops. A graph launch also waits for the previous
// launch of the same executable graph (Op::exec: each graph_instantiate makes one), from whatever
// stream or thread (CUDA runs one launch of an executable graph at a time: "each launch is ordered
// behind ... any previous launches of graphExec"); launches of different executables of one graph
// do not wait for each other. A launch's nodes are issued one by one after it (steps of its
// thread); another thread's op issued to the stream meanwhile follows the whole graph, and the
// stream's tail stays that op (it bound to the launch or its first nodes before, overtaking the
// graph, and the graph's last nodes then took the tail back: a false deadlock in a full launch queue).
#pragma once
#include <cstdint>
#include <vector>

#include "core/program.hpp"
#include "core/timeline.hpp"

namespace hetsim {

class Binder {
public:
    Binder(const Program& pg, bool legacy_sync)
        : pg_(pg), stream_last_(pg.streams.size(), -1), stream_more_(pg.streams.size()),
          event_last_(pg.events.size(), -1), launch_(pg.threads.size(), -1), exec_last_(pg.execs.size(), -1),
          sinks_(pg.graphs.size()), legacy_tied_(pg.streams.size(), 0), open_launch_(pg.streams.size(), -1),
          overtaken_(pg.streams.size(), 0) {
        for (size_t s = 0; s < pg.streams.size(); ++s) legacy_tied_[s] = legacy_sync && pg.streams[s].kind != StreamKind::NonBlocking;
        for (size_t g = 0; g < pg.graphs.size(); ++g) {
            const Graph& gr = pg.graphs[g];
            if (gr.chain()) continue;
            dags_ = true;
            std::vector<uint8_t> waited(gr.nodes.size(), 0);
            for (uint32_t n : gr.after) waited[n] = 1;
            for (uint32_t k = 0; k < gr.nodes.size(); ++k)
                if (!waited[k]) sinks_[g].push_back(k);
        }
    }

    // Calls dep(op, kind) for each op that GPU op i, issued now, depends on (op -1: none yet;
    // for an event wait: the event has no record yet). Then call issued(i).
    template <class Dep>
    void bind(uint32_t i, Dep&& dep) const {
        const Op& op = ops_[i];
        const int32_t s = op.stream;
        if (op.graph_node) {
            const uint32_t launch = static_cast<uint32_t>(launch_[op.thread]);
            const Graph& g = pg_.graphs[ops_[launch].graph];
            if (!g.chain()) {
                const uint32_t k = i - launch - 1;
                const uint32_t first = g.after_index[k], last = g.after_index[k + 1];
                for (uint32_t a = first; a < last; ++a) dep(static_cast<int32_t>(launch + 1 + g.after[a]), CauseKind::StreamOrder);
                if (first == last) dep(static_cast<int32_t>(launch), CauseKind::StreamOrder);  // a first node
                return;
            }
        }
        // A graph launched again right behind its previous launch in the same stream: the stream
        // order is CUDA's one-launch-at-a-time order, and the first node follows the previous
        // launch's last nodes by graph.relaunch_gap (rule 7; graph_relaunch: 2.34 us in one stream
        // as across streams), not by the gap between two nodes.
        const bool special = is_special(op.kind);
        if (op.graph_node)  // a chain's node: the node before it, the launch for the first
            dep(static_cast<int32_t>(i) - 1, CauseKind::StreamOrder);
        else
            tail(s, special && relaunch_in_stream(op) ? CauseKind::GraphExec : CauseKind::StreamOrder, dep);
        if (legacy_tied_[s]) {
            const StreamKind sk = pg_.streams[s].kind;
            if (sk == StreamKind::Legacy) {
                for (size_t b = 1; b < pg_.streams.size(); ++b)
                    if (pg_.streams[b].kind == StreamKind::Blocking) tail(static_cast<int32_t>(b), CauseKind::Legacy, dep);
            } else if (sk == StreamKind::Blocking) {
                tail(0, CauseKind::Legacy, dep);
            }
        }
        if (!special) return;
        if (op.kind == OpKind::StreamWaitEvent) dep(event_last_[op.event], CauseKind::Event);
        if (op.kind == OpKind::GraphLaunch && exec_last_[op.exec] >= 0 &&
            ops_[static_cast<uint32_t>(exec_last_[op.exec])].stream != s) {
            // The previous launch's last nodes (ops after it, issued with it or soon after); in
            // the same stream, stream order holds the launch already.
            const uint32_t prev = static_cast<uint32_t>(exec_last_[op.exec]);
            const Graph& g = pg_.graphs[op.graph];
            if (g.chain())
                dep(static_cast<int32_t>(prev + g.nodes.size()), CauseKind::GraphExec);
            else
                for (uint32_t k : sinks_[op.graph]) dep(static_cast<int32_t>(prev + 1 + k), CauseKind::GraphExec);
        }
    }
    void issued(uint32_t i) {
        const Op& op = ops_[i];
        const int32_t s = op.stream;
        if (is_special(op.kind)) {
            if (op.kind == OpKind::EventRecord) event_last_[op.event] = static_cast<int32_t>(i);
            if (op.kind == OpKind::GraphLaunch) launch_[op.thread] = exec_last_[op.exec] = static_cast<int32_t>(i);
        }
        if (op.graph_node) {
            const uint32_t launch = static_cast<uint32_t>(launch_[op.thread]);
            const uint32_t g = static_cast<uint32_t>(ops_[launch].graph);
            // Another thread's op (or launch) was issued to the stream after this launch: the
            // stream's tail is that op, which follows this graph.
            const bool mine = open_launch_[s] == static_cast<int32_t>(launch);
            if (mine && i - launch == pg_.graphs[g].nodes.size()) open_launch_[s] = -1;
            if (!mine || overtaken_[s]) return;
            if (!pg_.graphs[g].chain()) {
                if (i - launch != pg_.graphs[g].nodes.size()) return;  // not the last node yet
                const std::vector<uint32_t>& sinks = sinks_[g];
                stream_last_[s] = static_cast<int32_t>(launch + 1 + sinks[0]);
                stream_more_[s].clear();
                for (size_t k = 1; k < sinks.size(); ++k) stream_more_[s].push_back(static_cast<int32_t>(launch + 1 + sinks[k]));
                return;
            }
        }
        stream_last_[s] = static_cast<int32_t>(i);
        if (dags_ && !stream_more_[s].empty()) stream_more_[s].clear();
        if (op.kind == OpKind::GraphLaunch && !op.graph_node) {
            open_launch_[s] = static_cast<int32_t>(i);
            overtaken_[s] = 0;
        } else if (open_launch_[s] >= 0 && !op.graph_node) {
            overtaken_[s] = 1;
        }
    }

    // What a sync waits for: a stream's last work, an event's last record, every stream's.
    template <class F>
    void stream_tail(int32_t s, F&& f) const {
        tail(s, CauseKind::Sync, [&](int32_t op, CauseKind) { f(op); });
    }
    template <class F>
    void device_tail(F&& f) const {
        for (size_t s = 0; s < stream_last_.size(); ++s) stream_tail(static_cast<int32_t>(s), f);
    }
    int32_t stream_last(int32_t s) const { return stream_last_[s]; }
    int32_t event_last(int32_t e) const { return event_last_[e]; }
    // The last launch of executable graph `exec` bound so far (-1: never launched).
    int32_t exec_last(uint64_t exec) const { return exec_last_[exec]; }

private:
    // The kinds that bind or issue more than stream order (an event wait, an event record, a
    // graph launch): one bit test leaves the others, most ops, to the stream-order path.
    static constexpr bool is_special(OpKind k) {
        constexpr uint32_t kSpecial = 1u << static_cast<int>(OpKind::StreamWaitEvent) | 1u << static_cast<int>(OpKind::EventRecord) |
                                      1u << static_cast<int>(OpKind::GraphLaunch);
        static_assert(kOpKinds <= 32);
        return (1u << static_cast<int>(k)) & kSpecial;
    }
    // Launch op `op` of an executable graph whose previous launch is in the same stream and ends
    // it: the stream's last op is one of that launch's nodes (they follow the launch op in the program).
    bool relaunch_in_stream(const Op& op) const {
        if (op.kind != OpKind::GraphLaunch || exec_last_[op.exec] < 0) return false;
        const int32_t prev = exec_last_[op.exec], last = stream_last_[op.stream];
        return ops_[static_cast<uint32_t>(prev)].stream == op.stream && last > prev &&
               last <= prev + static_cast<int32_t>(pg_.graphs[op.graph].nodes.size());
    }
    template <class Dep>
    void tail(int32_t s, CauseKind kind, Dep&& dep) const {
        if (open_launch_[s] >= 0 && !overtaken_[s]) {  // a launch whose nodes are not all issued: its last nodes
            const uint32_t launch = static_cast<uint32_t>(open_launch_[s]);
            const Graph& g = pg_.graphs[ops_[launch].graph];
            if (g.chain())
                dep(static_cast<int32_t>(launch + g.nodes.size()), kind);
            else
                for (uint32_t k : sinks_[ops_[launch].graph]) dep(static_cast<int32_t>(launch + 1 + k), kind);
            return;
        }
        dep(stream_last_[s], kind);
        if (dags_)  // only a DAG graph's launch leaves more than one op at a stream's tail
            for (int32_t o : stream_more_[s]) dep(o, kind);
    }

    const Program& pg_;
    const Op* const ops_ = pg_.ops.data();  // fixed while the Binder lives
    std::vector<int32_t> stream_last_;                // per stream: its last op (-1: none)
    std::vector<std::vector<int32_t>> stream_more_;   // per stream: the rest of its tail (a graph's other ends)
    std::vector<int32_t> event_last_;
    std::vector<int32_t> launch_;                     // per host thread: its last graph launch
    std::vector<int32_t> exec_last_;                  // per executable graph: its last launch
    std::vector<std::vector<uint32_t>> sinks_;        // per DAG graph: the nodes no node waits for
    bool dags_ = false;                               // some graph is a DAG (not a chain): stream_more_ may fill
    // Per stream: the legacy default stream's implicit synchronisation binds it (legacy_sync,
    // and the stream is the legacy one or a blocking one), so that an op on a non-blocking
    // stream skips the test of its stream's kind.
    std::vector<uint8_t> legacy_tied_;
    std::vector<int32_t> open_launch_;  // per stream: the last launch to it while its nodes are being issued (-1: none)
    std::vector<uint8_t> overtaken_;    // per stream: an op of another thread was issued after that launch
};

}  // namespace hetsim
