// Lowering of op lists (threads form) and task graphs (tasks form) into Program ops.
#include <algorithm>
#include <cctype>

#include "frontend/lowerer.hpp"
#include "models/kernel_model.hpp"
#include "sim/graph.hpp"

namespace hetsim {

namespace {

// The names an op map may start with: the op table's spellings, then the two blocks.
const std::vector<std::string>& op_kinds() {
    static const std::vector<std::string> k = [] {
        std::vector<std::string> v;
        for (const OpSpelling& s : op_spellings()) v.push_back(s.yaml);
        v.push_back("repeat");
        v.push_back("if");
        return v;
    }();
    return k;
}

bool is_alloc(OpKind k) { return k >= OpKind::Malloc && k <= OpKind::FreeAsync; }

std::vector<std::string> keys_for(const std::string& kind, bool task) {
    std::vector<std::string> k{kind, "name"};
    if (kind == "repeat") return {"repeat", "var", "do"};
    if (kind == "if") return {"if", "then", "else"};
    const OpSpelling* sp = find_spelling(kind);
    std::string_view keys = sp->keys;
    for (size_t pos = 0; pos < keys.size();) {
        size_t end = keys.find(' ', pos);
        if (end == std::string_view::npos) end = keys.size();
        if (end > pos) k.emplace_back(keys.substr(pos, end - pos));
        pos = end + 1;
    }
    if (task) {
        k.push_back("after");
        if (sp->kind == OpKind::HostWork) k.push_back("thread");
        else if (std::find(k.begin(), k.end(), "stream") == k.end()) k.push_back("stream");
    }
    return k;
}

}  // namespace

void Lowerer::lower_thread(const std::string& name, const YAML::Node& list) {
    int32_t thread = threads_.at(name);
    if (!list.IsSequence()) fail_at(list, "thread '" + name + "' must be a list of ops, got " + a_node_type(list));
    lower_list(list, thread);
}

void Lowerer::lower_list(const YAML::Node& list, int32_t thread) {
    if (!list.IsSequence()) fail_at(list, "expected a list of ops, got " + a_node_type(list));
    for (const auto& op : list) lower_op(op, thread);
}

static std::string find_kind(const Lowerer& L, const YAML::Node& n) {
    if (!n.IsMap()) L.fail_at(n, "an op must be a mapping such as {kernel: name, stream: s}, got " + a_node_type(n));
    if (n.size() == 0) L.fail_at(n, "empty op; write an op such as {host: name, duration: 2ms}");
    std::string kind;
    for (auto it = n.begin(); it != n.end(); ++it) {
        if (!it->first.IsScalar()) L.fail_at(it->first, "op keys must be plain names, got " + a_node_type(it->first));
        std::string k = it->first.Scalar();
        // The same kind twice is a duplicate key, which check_keys reports.
        if (std::find(op_kinds().begin(), op_kinds().end(), k) != op_kinds().end() && k != kind) {
            if (!kind.empty()) L.fail_at(it->first, "op has two kinds, '" + kind + "' and '" + k + "'; split it into two ops");
            kind = k;
        }
    }
    if (kind.empty()) {
        std::string first = n.begin()->first.Scalar();
        std::string near = did_you_mean(first, op_kinds());
        std::string msg = "unknown op '" + first + "'";
        if (!near.empty()) msg += "; did you mean '" + near + "'?";
        else {
            msg += " (expected one of:";
            for (const auto& k : op_kinds()) msg += " " + k;
            msg += ")";
        }
        L.fail_at(n.begin()->first, msg);
    }
    return kind;
}

void Lowerer::lower_op(const YAML::Node& n, int32_t thread) {
    // Loop bodies are lowered once per iteration: find the kind and check the keys once.
    MapFields* mf = n.IsMap() && n.Mark().pos >= 0 ? &fields_of(n) : nullptr;
    if (!mf || !mf->checked) {
        std::string k = find_kind(*this, n);
        check_keys(n, file_, keys_for(k, false), k + " op");
        if (mf) {
            mf->kind = k;
            mf->checked = true;
        }
        if (!mf) return lower_checked_op(n, thread, k);
    }
    lower_checked_op(n, thread, mf->kind);
}

void Lowerer::lower_checked_op(const YAML::Node& n, int32_t thread, const std::string& kind) {
    if (kind == "repeat") {
        int64_t count = need_int(field(n, "repeat"), "repeat count", 0, static_cast<int64_t>(std::min<uint64_t>(opts_.max_ops, INT64_MAX)),
                                 "; " + std::to_string(opts_.max_ops) +
                                     " is the cap on ops (--max-ops): lower the count, or raise the cap with --max-ops if this is intended");
        std::string var = field(n, "var") ? need_name(field(n, "var"), "loop variable") : "i";
        if (!(std::isalpha(static_cast<unsigned char>(var[0])) || var[0] == '_') ||
            !std::all_of(var.begin(), var.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
            fail_at(field(n, "var"), "loop variable must be a plain name such as i or chunk, got '" + var + "'");
        for (const auto& lv : loop_vars_)
            if (lv.first == var) fail_at(field(n, "var") ? field(n, "var") : n, "loop variable '" + var + "' is already used by an enclosing repeat; name this one with 'var'");
        if (params_.count(var)) fail_at(field(n, "var") ? field(n, "var") : n, "loop variable '" + var + "' shadows a param of the same name");
        if (!field(n, "do")) fail_at(n, "repeat needs a 'do' list of ops");
        if (!field(n, "do").IsSequence()) fail_at(field(n, "do"), "repeat's 'do' must be a list of ops, got " + a_node_type(field(n, "do")));
        if (++depth_ > 16) fail_at(n, "repeat blocks nest deeper than 16");
        loop_vars_.push_back({var, 0});
        // Loops over empty or filtered bodies emit nothing; cap their iterations too (at twice
        // --max-ops, so that ordinary loop nests meet the op cap first), so no input expands unbounded.
        const uint64_t cap = opts_.max_ops > UINT64_MAX / 2 ? UINT64_MAX : 2 * opts_.max_ops;
        const YAML::Node body = field(n, "do");
        const uint64_t step = body.size() == 0 && count > 0 ? static_cast<uint64_t>(count) : 1;  // an empty body: all at once
        for (int64_t i = 0; i < count; i += static_cast<int64_t>(step)) {
            iterations_ = iterations_ > UINT64_MAX - step ? UINT64_MAX : iterations_ + step;
            if (iterations_ > cap)
                fail_at(field(n, "repeat"), "the scenario's loops run more than " + std::to_string(cap) +
                                         " iterations in all; lower the counts, or raise the cap with --max-ops if this is intended");
            loop_vars_.back().second = i;
            iter_dirty_ = true;
            lower_list(body, thread);
        }
        loop_vars_.pop_back();
        iter_dirty_ = true;
        --depth_;
        return;
    }
    if (kind == "if") {
        if (!field(n, "then") && !field(n, "else")) fail_at(n, "'if' needs a 'then' list of ops (and optionally 'else')");
        for (const char* branch : {"then", "else"})
            if (field(n, branch) && !field(n, branch).IsSequence())
                fail_at(field(n, branch), std::string("'") + branch + "' must be a list of ops, got " + a_node_type(field(n, branch)));
        Value c = eval(field(n, "if"), "condition");
        if (c.dim != Dim::None)
            fail_at(field(n, "if"), "condition must be a comparison such as 'i > 0', got " + shown(field(n, "if")) + " (a " + to_string(c.dim) + ")");
        bool yes = c.integral ? c.i != 0 : c.d != 0;
        if (yes && field(n, "then")) lower_list(field(n, "then"), thread);
        if (!yes && field(n, "else")) lower_list(field(n, "else"), thread);
        return;
    }
    if (capturing_ >= 0) {  // a node of the graph being declared
        if (!(find_spelling(kind)->forms & kInGraphs))
            fail_at(field(n, kind), "'" + kind + "' cannot be a graph node; a graph holds kernel, memcpy_async, "
                                    "memset_async and host_func ops (and repeat/if around them)");
        if (field(n, "stream"))
            fail_at(field(n, "stream"), "graph nodes run on the stream of their graph_launch; remove 'stream' here");
        Op op;
        Site site;
        std::string label;
        fill_op(op, site, kind, n, kNone, label, false);
        for (const auto& lv : loop_vars_) label += "[" + std::to_string(lv.second) + "]";  // loops inside the graph
        op.stream = kNone;
        site.label = intern_name(label);
        site.loc = intern_loc(n);
        op.site = intern_site(site);
        Graph& g = sc_.program.graphs[capturing_];
        if (g.nodes.size() >= opts_.max_ops)
            fail_at(n, "graph '" + g.name + "' has more than " + std::to_string(opts_.max_ops) + " nodes; raise the cap with --max-ops");
        g.nodes.push_back(op);
        return;
    }
    OpTemplate* tpl = n.Mark().pos >= 0 ? &templates_[static_cast<size_t>(n.Mark().pos)] : nullptr;
    if (tpl && tpl->state == 1 && tpl->thread == thread) {
        Op op = tpl->op;
        if (tpl->dyn_stream) op.stream = stream_ref(tpl->stream_node, thread);
        if (tpl->dyn_duration) op.duration = need_time(tpl->duration_node, "duration");
        sc_.program.threads[thread].ops.push_back(emit_interned(op, n));
        return;
    }
    Op op;
    op.thread = static_cast<int16_t>(thread);
    Site site;
    std::string label;
    dyn_nodes_.clear();
    fill_op(op, site, kind, n, thread, label, false);
    if (op.kind == OpKind::GraphLaunch) return emit_graph_launch(op, site, n, label, thread);
    uint32_t idx = emit(op, site, n, label);
    sc_.program.threads[thread].ops.push_back(idx);
    if (tpl && tpl->state == 0) {
        // Reusable when every loop-dependent scalar is the stream (an index) or a host op's or
        // fixed-duration kernel's duration: re-evaluating those two redoes all their checks.
        const YAML::Node st = field(n, "stream"), du = field(n, "duration");
        const bool dur_ok = op.kind == OpKind::HostWork || op.kind == OpKind::HostFunc ||
                            (op.kind == OpKind::Kernel && site.flops == 0 && op.bytes == 0);
        bool reusable = true, dyn_stream = false, dyn_duration = false;
        for (size_t pos : dyn_nodes_) {
            if (st && st.Mark().pos >= 0 && static_cast<size_t>(st.Mark().pos) == pos) dyn_stream = true;
            else if (dur_ok && du && du.Mark().pos >= 0 && static_cast<size_t>(du.Mark().pos) == pos) dyn_duration = true;
            else reusable = false;
        }
        tpl->state = reusable ? 1 : 2;
        tpl->thread = thread;
        tpl->op = sc_.program.ops[idx];
        tpl->dyn_stream = dyn_stream;
        tpl->dyn_duration = dyn_duration;
        if (dyn_stream) tpl->stream_node = st;
        if (dyn_duration) tpl->duration_node = du;
    }
}

// emit() for an op whose site (label, source position, loop depth) is already interned. The
// ops of one loop iteration share one slice of loop indices.
uint32_t Lowerer::emit_interned(Op op, const YAML::Node& where) {
    auto& pg = sc_.program;
    check_caps(where);
    if (!loop_vars_.empty()) {
        if (iter_dirty_) {
            iter_slice_ = static_cast<uint32_t>(pg.iter_indices.size());
            for (const auto& lv : loop_vars_) pg.iter_indices.push_back(static_cast<uint32_t>(lv.second));
            iter_dirty_ = false;
        }
        op.iter_begin = iter_slice_;
    }
    pg.ops.push_back(op);
    return static_cast<uint32_t>(pg.ops.size() - 1);
}

// A graph launch: the launch op, then a copy of each node on the launch's stream, named and
// placed as the node is in the graph, with the launch's loop indices.
void Lowerer::emit_graph_launch(Op launch, Site& site, const YAML::Node& n, const std::string& label, int32_t thread) {
    auto& pg = sc_.program;
    pg.threads[thread].ops.push_back(emit(launch, site, n, label));
    for (size_t k = 0; k < pg.graphs[launch.graph].nodes.size(); ++k) {
        Op node = pg.graphs[launch.graph].nodes[k];  // copied: emit may grow the vectors
        node.thread = static_cast<int16_t>(thread);
        node.stream = launch.stream;
        node.graph_node = true;
        Site ns = pg.sites[node.site];
        ns.depth = static_cast<uint8_t>(loop_vars_.size());
        node.site = intern_site(ns);
        pg.threads[thread].ops.push_back(emit_interned(node, n));
    }
}

void Lowerer::parse_graphs(const YAML::Node& n) {
    if (!n.IsMap()) fail_at(n, "'graphs' must map graph names to lists of ops (the ops captured from one stream)");
    for (auto it = n.begin(); it != n.end(); ++it) {
        std::string name = need_name(it->first, "graph name");
        if (graphs_.count(name)) fail_at(it->first, "duplicate graph '" + name + "'; each graph name may be declared once");
        if (!it->second.IsSequence() || it->second.size() == 0)
            fail_at(it->second, "graph '" + name + "' must be a non-empty list of ops such as [{kernel: k, duration: 5us}]");
        graphs_[name] = NamedDecl{static_cast<uint32_t>(sc_.program.graphs.size()), 1};
        sc_.program.graphs.push_back(Graph{name, {}});
        capturing_ = static_cast<int32_t>(sc_.program.graphs.size() - 1);
        lower_list(it->second, kNone);
        capturing_ = -1;
        if (sc_.program.graphs.back().nodes.empty())
            fail_at(it->second, "graph '" + name + "' has no nodes (its loops or conditions emit no op)");
    }
}

// The caps on ops (--max-ops) and on memory (--max-memory), before one more op is emitted.
void Lowerer::check_caps(const YAML::Node& where) const {
    if (sc_.program.ops.size() >= opts_.max_ops)
        fail_at(where, "the scenario expands to more than " + std::to_string(opts_.max_ops) +
                           " ops; raise the cap with --max-ops if this is intended");
    if (const size_t n = sc_.program.ops.size(); (n & (n - 1)) == 0 || n % 1024 == 0)  // cheap: every 1024 ops
        check_memory_cap(sc_.program, opts_.max_memory, opts_.run_bytes_per_op, loc(where));
}

uint32_t Lowerer::emit(Op op, Site& site, const YAML::Node& where, const std::string& label) {
    site.label = intern_name(label);
    site.loc = intern_loc(where);
    site.depth = static_cast<uint8_t>(loop_vars_.size());
    op.site = intern_site(site);
    return emit_interned(op, where);
}

void Lowerer::fill_op(Op& op, Site& site, const std::string& kind, const YAML::Node& n, int32_t thread, std::string& label,
                      bool task) {
    const YAML::Node head = field(n, kind);
    auto default_stream = [&]() -> int32_t {
        return default_per_thread_ && thread >= 0 ? per_thread_stream(thread) : 0;
    };
    auto stream_or_default = [&]() { return field(n, "stream") ? stream_ref(field(n, "stream"), thread) : default_stream(); };
    auto label_from_head = [&]() {
        if (head && (head.IsMap() || head.IsSequence()))
            fail_at(head, "the value of '" + kind + "' is the op's label, a name such as 'load'; got " + a_node_type(head));
        if (head && head.IsScalar() && !head.Scalar().empty()) label = substitute(head, head.Scalar());
        else label = kind;
    };
    if (kind == "host") {
        op.kind = OpKind::HostWork;
        label_from_head();
        if (!field(n, "duration")) fail_at(n, "host op '" + label + "' needs a 'duration' such as 2ms");
        op.duration = need_time(field(n, "duration"), "duration");
    } else if (kind == "kernel") {
        op.kind = OpKind::Kernel;
        label_from_head();
        op.stream = stream_or_default();
        fill_kernel(op, site, n);
    } else if (kind == "memcpy" || kind == "memcpy_async" || kind == "memset" || kind == "memset_async") {
        bool memset = kind.rfind("memset", 0) == 0;
        op.kind = memset ? OpKind::Memset : OpKind::Memcpy;
        op.sync = !task && kind.find("_async") == std::string::npos;
        label_from_head();
        op.stream = op.sync ? default_stream() : stream_or_default();
        fill_copy(op, n, memset);
    } else if (kind == "event_record" || kind == "stream_wait_event") {
        op.kind = kind == "event_record" ? OpKind::EventRecord : OpKind::StreamWaitEvent;
        op.event = event_ref(head);
        op.stream = stream_or_default();
        label = kind + ":" + sc_.program.events[op.event].name;
    } else if (kind == "event_sync") {
        op.kind = OpKind::EventSync;
        op.event = event_ref(head);
        label = "event_sync:" + sc_.program.events[op.event].name;
    } else if (kind == "stream_sync") {
        op.kind = OpKind::StreamSync;
        op.stream = stream_ref(head, thread);
        label = "stream_sync:" + sc_.program.streams[op.stream].name;
    } else if (kind == "device_sync") {
        op.kind = OpKind::DeviceSync;
        label = "device_sync";
    } else if (kind == "host_func") {
        op.kind = OpKind::HostFunc;
        label_from_head();
        op.stream = stream_or_default();
        if (!field(n, "duration")) fail_at(n, "host_func '" + label + "' needs a 'duration' (the callback's run time) such as 10us");
        op.duration = need_time(field(n, "duration"), "duration");
    } else if (kind == "graph_instantiate" || kind == "graph_launch") {
        op.kind = kind == "graph_instantiate" ? OpKind::GraphInstantiate : OpKind::GraphLaunch;
        op.graph = graph_ref(head);
        if (op.kind == OpKind::GraphLaunch) op.stream = stream_or_default();
        label = kind + ":" + sc_.program.graphs[op.graph].name;
    } else if (const OpSpelling* alloc = find_spelling(kind); alloc && is_alloc(alloc->kind)) {
        op.kind = alloc->kind;
        op.buffer = buffer_ref(head);
        const Buffer& b = sc_.program.buffers[op.buffer];
        bool host_side = kind == "malloc_host" || kind == "free_host" || kind == "host_register";
        if (host_side && b.kind != MemKind::Pinned)
            fail_at(head, kind + " makes pinned host memory; declare '" + b.name + "' with kind: pinned (it is " + to_string(b.kind) + ")");
        if (!host_side && b.kind != MemKind::Device)
            fail_at(head, kind + " allocates device memory; declare '" + b.name + "' with kind: device (it is " + to_string(b.kind) + ")");
        op.bytes = field(n, "bytes") ? need_bytes(field(n, "bytes"), "bytes") : b.bytes;
        if (op.kind == OpKind::MallocAsync || op.kind == OpKind::FreeAsync) op.stream = stream_or_default();
        label = kind + ":" + b.name;
    } else if (kind == "prefetch") {
        op.kind = OpKind::Prefetch;
        op.buffer = buffer_ref(head);
        const Buffer& b = sc_.program.buffers[op.buffer];
        if (b.kind != MemKind::Managed) fail_at(head, "prefetch needs a managed buffer; '" + b.name + "' is " + to_string(b.kind));
        op.stream = stream_or_default();
        op.bytes = field(n, "bytes") ? need_bytes(field(n, "bytes"), "bytes") : b.bytes;
        if (op.bytes > b.bytes)
            fail_at(field(n, "bytes"), "prefetch of " + std::to_string(op.bytes) + " bytes overruns buffer '" + b.name + "' of " +
                                    std::to_string(b.bytes) + " bytes; 'bytes' may be at most the buffer's size");
        std::string to = field(n, "to") ? need_name(field(n, "to"), "to") : "device";
        if (to != "device" && to != "host") fail_at(field(n, "to"), "prefetch 'to' must be 'device' or 'host', got '" + to + "'");
        op.to_device = to == "device";
        label = "prefetch:" + b.name;
    }
    if (YAML::Node nm = field(n, "name")) label = need_name(nm, "name");
    if (YAML::Node u = field(n, "uses")) {
        if (!u.IsSequence()) fail_at(u, "'uses' must be a list of managed buffers");
        site.uses_begin = static_cast<uint32_t>(sc_.program.uses.size());
        for (const auto& b : u) {
            int32_t id = buffer_ref(b);
            if (sc_.program.buffers[id].kind != MemKind::Managed)
                fail_at(b, "'uses' lists managed buffers whose residency matters; '" + sc_.program.buffers[id].name + "' is " +
                               to_string(sc_.program.buffers[id].kind));
            sc_.program.uses.push_back(static_cast<uint32_t>(id));
        }
        if (sc_.program.uses.size() - site.uses_begin > UINT16_MAX) fail_at(u, "'uses' lists more than 65535 buffers");
        site.uses_count = static_cast<uint16_t>(sc_.program.uses.size() - site.uses_begin);
    }
}

void Lowerer::fill_copy(Op& op, const YAML::Node& n, bool memset) {
    const auto& bufs = sc_.program.buffers;
    auto host_side = [](MemKind k) { return k == MemKind::Pinned || k == MemKind::Pageable; };
    uint64_t limit = UINT64_MAX;
    const Buffer* limit_buf = nullptr;
    if (memset) {
        op.dir = CopyDir::D2D;
        op.host_mem = MemKind::Device;
        if (field(n, "dst")) {
            int32_t d = buffer_ref(field(n, "dst"));
            if (host_side(bufs[d].kind)) fail_at(field(n, "dst"), "memset writes device or managed memory; '" + bufs[d].name + "' is " + to_string(bufs[d].kind));
            limit = bufs[d].bytes;
            limit_buf = &bufs[d];
        }
    } else if (field(n, "src") || field(n, "dst")) {
        if (!field(n, "src") || !field(n, "dst")) fail_at(n, "a copy needs both 'src' and 'dst' buffers (or 'direction' and 'bytes')");
        if (field(n, "direction") || field(n, "memory")) fail_at(field(n, "direction") ? field(n, "direction") : field(n, "memory"), "with 'src' and 'dst' the direction and memory kind come from the buffers; drop 'direction'/'memory'");
        int32_t s = buffer_ref(field(n, "src")), d = buffer_ref(field(n, "dst"));
        const Buffer &sb = bufs[s], &db = bufs[d];
        bool sh = host_side(sb.kind), dh = host_side(db.kind);
        if (sh && dh) fail_at(n, "host-to-host copies ('" + sb.name + "' -> '" + db.name + "') are not CUDA copies; model them as host work");
        if (sb.kind == MemKind::Managed && db.kind == MemKind::Managed)
            fail_at(n, "copies between two managed buffers are not modelled; copy to or from a device buffer instead");
        if (sh || (sb.kind == MemKind::Managed && db.kind == MemKind::Device)) {
            op.dir = CopyDir::H2D;
            op.host_mem = sb.kind;
            op.buffer = s;
        } else if (dh || (db.kind == MemKind::Managed && sb.kind == MemKind::Device)) {
            op.dir = CopyDir::D2H;
            op.host_mem = db.kind;
            op.buffer = d;
        } else {
            op.dir = CopyDir::D2D;
            op.host_mem = MemKind::Device;
        }
        limit = std::min(sb.bytes, db.bytes);
        limit_buf = sb.bytes < db.bytes ? &sb : &db;
    } else {
        if (!field(n, "direction")) fail_at(n, "a copy needs 'src' and 'dst' buffers, or 'direction' (h2d, d2h, d2d) and 'bytes'");
        std::string dir = need_name(field(n, "direction"), "direction");
        if (dir == "h2d") op.dir = CopyDir::H2D;
        else if (dir == "d2h") op.dir = CopyDir::D2H;
        else if (dir == "d2d") op.dir = CopyDir::D2D;
        else fail_at(field(n, "direction"), "direction must be h2d, d2h or d2d, got '" + dir + "'");
        std::string mem = field(n, "memory") ? need_name(field(n, "memory"), "memory") : "pinned";
        if (mem == "pinned") op.host_mem = MemKind::Pinned;
        else if (mem == "pageable") op.host_mem = MemKind::Pageable;
        else if (mem == "managed") op.host_mem = MemKind::Managed;
        else fail_at(field(n, "memory"), "memory must be pinned, pageable or managed, got '" + mem + "'");
        if (op.dir == CopyDir::D2D) op.host_mem = MemKind::Device;
    }
    if (field(n, "bytes")) op.bytes = need_bytes(field(n, "bytes"), "bytes");
    else if (limit != UINT64_MAX) op.bytes = limit;
    else fail_at(n, std::string(memset ? "memset" : "copy") + " needs 'bytes' (a size such as 64MiB)");
    if (limit_buf && op.bytes > limit)
        fail_at(field(n, "bytes"), std::string(memset ? "memset" : "copy") + " of " + std::to_string(op.bytes) + " bytes overruns buffer '" +
                                limit_buf->name + "' of " + std::to_string(limit_buf->bytes) + " bytes; 'bytes' may be at most " +
                                std::to_string(limit) + " here");
}

void Lowerer::fill_kernel(Op& op, Site& site, const YAML::Node& n) {
    const HwProfile& p = sc_.profile;
    bool has_dur = bool(field(n, "duration")), has_roof = field(n, "flops") || field(n, "bytes");
    if (has_dur && has_roof) fail_at(field(n, "duration"), "a kernel takes either 'duration' or 'flops'/'bytes' (roofline), not both");
    if (!has_dur && !has_roof) fail_at(n, "kernel needs a 'duration', or 'flops' and/or 'bytes' for a roofline estimate");
    if (has_dur) op.duration = need_time(field(n, "duration"), "duration");
    if (field(n, "flops")) site.flops = need_real(field(n, "flops"), "flops");
    if (field(n, "bytes")) op.bytes = need_bytes(field(n, "bytes"), "bytes");
    site.shape.grid = field(n, "grid") ? static_cast<uint32_t>(need_int(field(n, "grid"), "grid", 1, INT32_MAX)) : static_cast<uint32_t>(p.sm_count);
    site.shape.block = field(n, "block") ? static_cast<uint32_t>(need_int(field(n, "block"), "block", 1, 1024)) : 256;
    site.shape.regs_per_thread = field(n, "registers") ? static_cast<uint32_t>(need_int(field(n, "registers"), "registers", 1, 255)) : 32;
    site.shape.smem_per_block = field(n, "shared_memory") ? static_cast<uint32_t>(std::min<uint64_t>(need_bytes(field(n, "shared_memory"), "shared_memory"), UINT32_MAX)) : 0;
    check_kernel_fits(site.shape, n);
}

void Lowerer::check_kernel_fits(const KernelShape& k, const YAML::Node& n) const {
    std::string why;
    if (blocks_per_sm(sc_.profile, k, &why) != 0) return;
    // Point at the value to change and say how far.
    const HwProfile& p = sc_.profile;
    auto at = [&](const char* key) { return n[key] ? n[key] : n; };
    if (k.block > p.sm_threads)
        fail_at(at("block"), "kernel cannot fit on an SM: " + why + "; use a block of at most " + std::to_string(p.sm_threads) + " threads");
    if (static_cast<uint64_t>(k.block) * k.regs_per_thread > p.sm_registers)
        fail_at(at(field(n, "registers") ? "registers" : "block"),
                "kernel cannot fit on an SM: " + why + "; with " + std::to_string(k.block) + " threads a block may use at most " +
                    std::to_string(p.sm_registers / k.block) + " registers per thread (lower 'registers' or 'block')");
    if (k.smem_per_block > p.sm_shared_memory)
        fail_at(at("shared_memory"), "kernel cannot fit on an SM: " + why + "; 'shared_memory' may be at most " +
                                         std::to_string(p.sm_shared_memory) + " bytes (" + format_bytes(p.sm_shared_memory) + ") per block");
    fail_at(n, "kernel cannot fit on an SM: " + why);
}

// ---------------------------------------------------------------- tasks form

void Lowerer::lower_tasks(const YAML::Node& tasks) {
    Program& pg = sc_.program;
    pg.tasks_form = true;
    if (!tasks.IsMap() || tasks.size() == 0) fail_at(tasks, "'tasks' must map task names to ops with 'after' lists");
    std::unordered_map<std::string, uint32_t> index;
    std::vector<YAML::Node> after_nodes;
    std::vector<YAML::Node> key_nodes;
    std::vector<std::string> task_names;
    for (auto it = tasks.begin(); it != tasks.end(); ++it) {
        std::string name = need_name(it->first, "task name");
        if (index.count(name)) fail_at(it->first, "duplicate task '" + name + "'; each task name may be used once");
        const YAML::Node n = it->second;  // a copy: it->second is a member of a temporary
        std::string kind = find_kind(*this, n);
        if (kind == "repeat" || kind == "if" || kind == "event_sync" || kind == "stream_sync" || kind == "device_sync" ||
            kind == "event_record" || kind == "stream_wait_event")
            fail_at(field(n, kind), "'" + kind + "' is not a task; in the tasks form, dependencies are 'after' lists");
        if (kind == "graph_instantiate" || kind == "graph_launch" || is_alloc(find_spelling(kind)->kind))
            fail_at(field(n, kind), "'" + kind + "' is not a task; write graphs and allocation calls in the threads form");
        check_keys(n, file_, keys_for(kind, true), "task '" + name + "'");
        Op op;
        Site site;
        int32_t thread = kNone;
        if (kind == "host") {
            std::string tname = field(n, "thread") ? need_name(field(n, "thread"), "thread") : "main";
            auto t = threads_.find(tname);
            if (t == threads_.end()) {
                if (pg.threads.size() >= static_cast<size_t>(kMaxThreads))
                    fail_at(field(n, "thread") ? field(n, "thread") : n, "more than " + std::to_string(kMaxThreads) +
                                                                          " host threads; a program may have at most that many");
                t = threads_.emplace(tname, static_cast<int32_t>(pg.threads.size())).first;
                pg.threads.push_back(HostThread{tname, {}});
                per_thread_.push_back(-1);
            }
            thread = t->second;
        }
        op.thread = static_cast<int16_t>(thread);
        std::string label;
        fill_op(op, site, kind, n, thread, label, true);
        if (!field(n, "name")) label = name;
        uint32_t idx = emit(op, site, n, label);
        index[name] = idx;
        if (thread >= 0) pg.threads[thread].ops.push_back(idx);
        else pg.gpu_tasks.push_back(idx);
        after_nodes.push_back(field(n, "after"));
        key_nodes.push_back(it->first);
        task_names.push_back(name);
    }
    std::vector<std::string> names;
    for (const auto& kv : index) names.push_back(kv.first);
    std::sort(names.begin(), names.end());
    pg.after_index.assign(1, 0);
    for (size_t t = 0; t < after_nodes.size(); ++t) {
        const uint32_t first = static_cast<uint32_t>(pg.after.size());
        const YAML::Node& a = after_nodes[t];
        if (a) {
            std::vector<YAML::Node> refs;
            if (a.IsScalar()) refs.push_back(a);
            else if (a.IsSequence()) for (const auto& r : a) refs.push_back(r);
            else fail_at(a, "'after' must be a list of task names such as [load0, copy0], got " + a_node_type(a));
            for (const auto& r : refs) {
                std::string dep = need_name(r, "task name");
                auto it = index.find(dep);
                if (it == index.end()) {
                    std::string near = did_you_mean(dep, names);
                    std::string known;
                    for (size_t k = 0; k < names.size() && k < 8; ++k) known += (k ? ", " : "") + names[k];
                    if (names.size() > 8) known += ", ...";
                    fail_at(r, "'after' names unknown task '" + dep + "'" +
                                   (near.empty() ? " (tasks: " + known + ")" : "; did you mean '" + near + "'?"));
                }
                if (it->second == t)
                    fail_at(r, "task '" + task_names[t] + "' lists itself in 'after'; a task cannot wait for itself");
                if (std::find(pg.after.begin() + first, pg.after.end(), it->second) != pg.after.end())
                    fail_at(r, "task '" + dep + "' appears twice in 'after'; list it once");
                pg.after.push_back(it->second);
            }
        }
        pg.after_index.push_back(static_cast<uint32_t>(pg.after.size()));
    }
    std::vector<uint32_t> cycle = find_cycle(pg);
    if (!cycle.empty()) {
        // In the tasks form op i is task i; in the cycle each task waits for the one before it.
        std::string msg = "tasks form a dependency cycle:";
        bool implicit = false;  // some wait is thread or stream order, not an 'after' entry
        for (size_t k = 0; k < cycle.size(); ++k) {
            uint32_t x = cycle[k], y = cycle[(k + 1) % cycle.size()];
            msg += " " + task_names[x] + " ->";
            if (std::find(pg.after_begin(y), pg.after_end(y), x) == pg.after_end(y)) implicit = true;
        }
        msg += " " + task_names[cycle.front()] + " (each waits for the one before it); remove one of these 'after' entries";
        if (implicit) msg += " (tasks on one stream or host thread also run in file order)";
        throw InputError(pg.loc(pg.ops[cycle.front()]), msg);
    }
}

}  // namespace hetsim
