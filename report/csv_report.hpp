// One CSV row per op, for spreadsheets and pandas. Times in nanoseconds, exact to the picosecond.
#pragma once
#include <ostream>
#include <string>

#include "core/program.hpp"
#include "core/timeline.hpp"

namespace hetsim::report {

// Header: op,name,kind,thread,stream,engine,host_start_ns,host_end_ns,gpu_start_ns,gpu_end_ns,
// sync_wait_ns,bytes. An absent phase leaves its cells empty; text is quoted per RFC 4180.
void write_csv(std::ostream& os, const Program& p, const Timeline& t);

// RFC 4180 field: quoted (with doubled quotes) when it holds a comma, quote, CR or LF.
std::string csv_field(const std::string& s);

}  // namespace hetsim::report
