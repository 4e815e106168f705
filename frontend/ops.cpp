// Op maps into Ops: which kind an op map is, the keys it may take, and each kind's fields.
#include <algorithm>

#include "frontend/lowerer.hpp"
#include "models/kernel_model.hpp"

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

}  // namespace

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

std::string find_kind(const Lowerer& L, const YAML::Node& n) {
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

// The op's kind, with its keys checked; once per map (loop bodies are reached once per iteration).
std::string Lowerer::checked_kind(const YAML::Node& n) {
    MapFields* mf = n.IsMap() && n.Mark().pos >= 0 ? &fields_of(n) : nullptr;
    if (mf && mf->checked) return mf->kind;
    std::string k = find_kind(*this, n);
    check_keys(n, file_, keys_for(k, false), k + " op");
    if (mf) {
        mf->kind = k;
        mf->checked = true;
    }
    return k;
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
    } else if (kind == "memcpy2d_async") {  // cudaMemcpy2DAsync: rows of `width` bytes between pitched layouts
        op.kind = OpKind::Memcpy;
        label_from_head();
        op.stream = stream_or_default();
        fill_copy(op, n, false, &site);
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
        if (YAML::Node f = field(n, "sets")) op.flag = flag_ref(f);
    } else if (kind == "put" || kind == "get") {
        op.kind = kind == "put" ? OpKind::QueuePut : OpKind::QueueGet;
        op.queue = queue_ref(head);
        label = kind + ":" + sc_.program.queues[op.queue].name;
    } else if (kind == "host_wait") {
        op.kind = OpKind::HostWait;
        op.flag = flag_ref(head);
        label = "host_wait:" + sc_.program.flags[op.flag].name;
    } else if (kind == "join") {
        // An array name joins each of its threads in turn (full_op emits one op per thread).
        op.kind = OpKind::Join;
        if (sc_.program.warmup > 0)
            fail_at(head, "join with measure: {warmup: " + std::to_string(sc_.program.warmup) +
                              "}: every iteration ends at a barrier all threads meet, so no thread ends before the last "
                              "iteration; drop 'warmup' or the join");
        const std::string name = need_name(head, "thread");
        const bool whole = name.find('[') == std::string::npos && thread_decls_.count(name) && thread_decls_.at(name).count > 1;
        if (whole) {
            op.target = static_cast<int32_t>(thread_decls_.at(name).first);
            join_count_ = thread_decls_.at(name).count;
        } else {
            op.target = resolve(head, name, thread_decls_, "thread");
            join_count_ = 1;
        }
        for (uint32_t k = 0; k < join_count_; ++k)
            if (op.target + static_cast<int32_t>(k) == thread)
                fail_at(head, "thread '" + sc_.program.threads[thread].name + "' joins itself; a thread joins another thread");
        label = "join:" + sc_.program.threads[op.target].name;
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
        const bool frees = kind.rfind("free", 0) == 0 || kind == "host_unregister";
        if (host_side && b.kind != MemKind::Pinned)
            fail_at(head, kind + (frees ? " releases" : " makes") + " pinned host memory; declare '" + b.name + "' with kind: pinned (it is " +
                              to_string(b.kind) + ")");
        if (!host_side && b.kind != MemKind::Device)
            fail_at(head, kind + (frees ? " releases" : " allocates") + " device memory; declare '" + b.name + "' with kind: device (it is " +
                              to_string(b.kind) + ")");
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
        if (to != "device" && to != "host") fail_enum(field(n, "to"), "prefetch 'to' must be 'device' or 'host', got '" + to + "'");
        op.to_device = to == "device";
        label = "prefetch:" + b.name;
    }
    if (YAML::Node nm = field(n, "name")) label = need_name(nm, "name");
    // The buffers the op touches: `uses` (a kernel's or host work's managed buffers), and host
    // work's `reads` and `writes` (managed pages fault to the host, pageable ones are then in the
    // CPU caches; pinned memory has nothing to model). One list on the site, without repeats.
    const bool host = op.kind == OpKind::HostWork;
    bool touched = false;
    std::vector<uint32_t> list;
    for (const char* key : {"uses", "reads", "writes"}) {
        YAML::Node u = field(n, key);
        if (!u) continue;
        touched = true;
        if (!u.IsSequence())
            fail_at(u, std::string("'") + key + "' must be a list of " + (host ? "host-visible" : "managed") + " buffers such as [h_buf]");
        for (const auto& b : u) {
            int32_t id = buffer_ref(b);
            const Buffer& buf = sc_.program.buffers[id];
            if (!host && buf.kind != MemKind::Managed)
                fail_at(b, "'uses' lists managed buffers whose residency matters; '" + buf.name + "' is " + to_string(buf.kind));
            if (host && buf.kind == MemKind::Device)
                fail_at(b, std::string("host work cannot touch device memory: '") + buf.name + "' in '" + key +
                               "' is a device buffer (list pageable, pinned or managed buffers)");
            if (buf.kind == MemKind::Pinned) continue;
            if (std::find(list.begin(), list.end(), static_cast<uint32_t>(id)) == list.end()) list.push_back(static_cast<uint32_t>(id));
        }
        if (list.size() > UINT16_MAX) fail_at(u, std::string("'") + key + "' lists more than 65535 buffers");
    }
    if (touched && !list.empty()) {
        auto& uses = sc_.program.uses;
        // Equal lists share one slice (an op lowered in full in many iterations lists the same buffers).
        auto [it, fresh] = uses_ids_.try_emplace(list, static_cast<uint32_t>(uses.size()));
        if (fresh) uses.insert(uses.end(), list.begin(), list.end());
        site.uses_begin = it->second;
        site.uses_count = static_cast<uint16_t>(list.size());
    }
}

void Lowerer::fill_copy(Op& op, const YAML::Node& n, bool memset, Site* pitched) {
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
        if (pitched) limit_buf = nullptr, pitched_bufs_[0] = &sb, pitched_bufs_[1] = &db;
    } else {
        if (!field(n, "direction")) fail_at(n, "a copy needs 'src' and 'dst' buffers, or 'direction' (h2d, d2h, d2d) and 'bytes'");
        std::string dir = need_name(field(n, "direction"), "direction");
        if (dir == "h2d") op.dir = CopyDir::H2D;
        else if (dir == "d2h") op.dir = CopyDir::D2H;
        else if (dir == "d2d") op.dir = CopyDir::D2D;
        else fail_enum(field(n, "direction"), "direction must be h2d, d2h or d2d, got '" + dir + "'");
        std::string mem = field(n, "memory") ? need_name(field(n, "memory"), "memory") : "pinned";
        if (mem == "pinned") op.host_mem = MemKind::Pinned;
        else if (mem == "pageable") op.host_mem = MemKind::Pageable;
        else if (mem == "managed") op.host_mem = MemKind::Managed;
        else fail_enum(field(n, "memory"), "memory must be pinned, pageable or managed, got '" + mem + "'");
        if (op.dir == CopyDir::D2D) {
            // No host memory takes part: a 'memory' here would be ignored without a word.
            if (field(n, "memory"))
                fail_at(field(n, "memory"), "a d2d copy moves device memory only; drop 'memory' (it names the host side of an h2d or d2h copy)");
            op.host_mem = MemKind::Device;
        }
    }
    if (pitched) return fill_pitch(op, *pitched, n);
    if (field(n, "bytes")) op.bytes = need_bytes(field(n, "bytes"), "bytes");
    else if (limit != UINT64_MAX) op.bytes = limit;
    else fail_at(n, std::string(memset ? "memset" : "copy") + " needs 'bytes' (a size such as 64MiB)");
    if (limit_buf && op.bytes > limit)
        fail_at(field(n, "bytes"), std::string(memset ? "memset" : "copy") + " of " + std::to_string(op.bytes) + " bytes overruns buffer '" +
                                limit_buf->name + "' of " + std::to_string(limit_buf->bytes) + " bytes; 'bytes' may be at most " +
                                std::to_string(limit) + " here");
    copy_limit_ = limit_buf ? limit : UINT64_MAX;  // an op template checks its loop-dependent bytes against it
}

// A pitched copy: `height` rows of `width` bytes, read every `spitch` and written every `dpitch`
// bytes (both default to the width); with buffers, each side's extent fits its buffer.
void Lowerer::fill_pitch(Op& op, Site& site, const YAML::Node& n) {
    if (!field(n, "width")) fail_at(n, "a pitched copy needs 'width' (the bytes of a row, such as 256B)");
    if (!field(n, "height")) fail_at(n, "a pitched copy needs 'height' (the number of rows)");
    const uint64_t width = need_bytes(field(n, "width"), "width");
    if (width == 0) fail_at(field(n, "width"), "width is 0; a row has at least 1 byte");
    site.rows = static_cast<uint32_t>(need_int(field(n, "height"), "height", 1, UINT32_MAX));
    site.spitch = field(n, "spitch") ? need_bytes(field(n, "spitch"), "spitch") : width;
    site.dpitch = field(n, "dpitch") ? need_bytes(field(n, "dpitch"), "dpitch") : width;
    for (const char* k : {"spitch", "dpitch"}) {
        const uint64_t pitch = k[0] == 's' ? site.spitch : site.dpitch;
        if (pitch < width)
            fail_at(field(n, k), std::string(k) + " " + format_bytes(pitch) + " is narrower than a row (width " + format_bytes(width) +
                                     "); a pitch is at least the width");
    }
    if (width > UINT64_MAX / site.rows) fail_at(field(n, "height"), "width x height overflows");
    op.bytes = width * site.rows;
    for (int side = 0; side < 2; ++side) {
        const Buffer* b = pitched_bufs_[side];
        const uint64_t pitch = side ? site.dpitch : site.spitch;
        const char* key = side ? "dpitch" : "spitch";
        // pitch x (rows - 1) + width, the bytes one side spans, in 64 bits.
        if (site.rows > 1 && pitch > (UINT64_MAX - width) / (site.rows - 1))
            fail_at(field(n, key) ? field(n, key) : field(n, "height"),
                    std::string(key) + " x (height - 1) + width overflows: the copy would span more than 2^64 bytes");
        const uint64_t extent = pitch * (site.rows - 1) + width;
        if (!b) continue;
        if (extent > b->bytes)
            fail_at(field(n, key) ? field(n, key) : field(n, "height"),
                    std::string("the copy spans ") + format_bytes(extent) + " of " + (side ? "dst" : "src") + " '" + b->name + "' (" +
                        std::to_string(site.rows) + " rows, pitch " + format_bytes(pitch) + "), which has " + format_bytes(b->bytes));
    }
    pitched_bufs_[0] = pitched_bufs_[1] = nullptr;
    copy_limit_ = UINT64_MAX;
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
    if (const YAML::Node sm = field(n, "shared_memory")) {
        const uint64_t smem = need_bytes(sm, "shared_memory");
        if (smem > p.sm_shared_memory)  // said with the value asked for (the shape holds 32 bits)
            fail_at(sm, "kernel cannot fit on an SM: a block needs " + std::to_string(smem) + " bytes of shared memory, more than " + std::to_string(p.sm_shared_memory) + " per SM; 'shared_memory' may be at most " +
                            std::to_string(p.sm_shared_memory) + " bytes (" + format_bytes(p.sm_shared_memory) + ") per block");
        site.shape.smem_per_block = static_cast<uint32_t>(smem);
    }
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

}  // namespace hetsim
