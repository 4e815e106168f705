#include "sim/program.hpp"

namespace hetsim {

const char* to_string(OpKind k) {
    switch (k) {
        case OpKind::HostWork: return "host";
        case OpKind::Kernel: return "kernel";
        case OpKind::Memcpy: return "memcpy";
        case OpKind::Memset: return "memset";
        case OpKind::EventRecord: return "event_record";
        case OpKind::StreamWaitEvent: return "stream_wait_event";
        case OpKind::EventSync: return "event_sync";
        case OpKind::StreamSync: return "stream_sync";
        case OpKind::DeviceSync: return "device_sync";
        case OpKind::Prefetch: return "prefetch";
        case OpKind::HostFunc: return "host_func";
        case OpKind::GraphInstantiate: return "graph_instantiate";
        case OpKind::GraphLaunch: return "graph_launch";
        case OpKind::Malloc: return "malloc";
        case OpKind::Free: return "free";
        case OpKind::MallocHost: return "malloc_host";
        case OpKind::FreeHost: return "free_host";
        case OpKind::HostRegister: return "host_register";
        case OpKind::MallocAsync: return "malloc_async";
        case OpKind::FreeAsync: return "free_async";
    }
    return "?";
}

const char* to_string(MemKind k) {
    switch (k) {
        case MemKind::Pinned: return "pinned";
        case MemKind::Pageable: return "pageable";
        case MemKind::Device: return "device";
        case MemKind::Managed: return "managed";
    }
    return "?";
}

const char* to_string(CopyDir d) {
    switch (d) {
        case CopyDir::H2D: return "h2d";
        case CopyDir::D2H: return "d2h";
        case CopyDir::D2D: return "d2d";
    }
    return "?";
}

const char* to_string(StreamKind k) {
    switch (k) {
        case StreamKind::Blocking: return "blocking";
        case StreamKind::NonBlocking: return "non_blocking";
        case StreamKind::Legacy: return "legacy";
        case StreamKind::PerThread: return "per_thread";
    }
    return "?";
}

std::string Program::op_name(uint32_t i) const {
    const Op& op = ops[i];
    std::string s = names[op.name];
    for (uint32_t k = 0; k < op.iter_count; ++k) {
        s.push_back('[');
        s.append(std::to_string(iter_indices[op.iter_begin + k]));
        s.push_back(']');
    }
    return s;
}

bool Program::has_gpu_phase(OpKind k) {
    switch (k) {
        case OpKind::Kernel: case OpKind::Memcpy: case OpKind::Memset: case OpKind::EventRecord:
        case OpKind::StreamWaitEvent: case OpKind::Prefetch: case OpKind::HostFunc: case OpKind::GraphLaunch:
        case OpKind::MallocAsync: case OpKind::FreeAsync:
            return true;
        default:
            return false;
    }
}

bool Program::is_stream_op(OpKind k) { return has_gpu_phase(k); }

}  // namespace hetsim

#include "sim/timeline.hpp"
namespace hetsim {
const char* to_string(CauseKind k) {
    switch (k) {
        case CauseKind::None: return "start";
        case CauseKind::ProgramOrder: return "program order";
        case CauseKind::Submit: return "launch";
        case CauseKind::StreamOrder: return "stream order";
        case CauseKind::Event: return "event wait";
        case CauseKind::Legacy: return "legacy default stream";
        case CauseKind::Sync: return "host sync";
        case CauseKind::After: return "after";
        case CauseKind::Resource: return "resource busy";
        case CauseKind::Queue: return "hardware queue";
    }
    return "?";
}
const char* to_string(Engine e) {
    switch (e) {
        case Engine::None: return "none";
        case Engine::H2D: return "copy engine H2D";
        case Engine::D2H: return "copy engine D2H";
        case Engine::Compute: return "SMs";
        case Engine::DeviceCopy: return "device copy";
    }
    return "?";
}
}  // namespace hetsim
