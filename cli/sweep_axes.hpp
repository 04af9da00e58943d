// The axis flags of `scanlab sweep` and `scanlab tune` (one parser for both): every op's size and
// option axes as --flags, --shapes for a list of size tuples, and their conversion to a
// SweepRequest's axes for one op (which refuses the flags of other ops).
#pragma once

#include <map>
#include <string>

#include "benchmarks/sweep.hpp"

namespace CLI {
class App;
}

namespace scanlab::cli {

struct AxisFlags {
  std::map<std::string, std::string> text;  // "--flag" -> its text ("" when not given)
  std::string shapes;                        // --shapes
};

// Adds every op's axis flags and --shapes to `app`, writing into `flags`.
void add_axis_flags(CLI::App& app, AxisFlags& flags);
// The axes of `op` from the flags (defaults for those not given); throws std::invalid_argument for
// a flag `op` lacks, a flag given twice (its own and --shapes) or an unparsable value.
std::vector<bench::AxisValues> axes_from_flags(const std::string& op, AxisFlags& flags);
// The help text that lists each op's axes and their defaults.
std::string axes_help();
// A command line argument quoted for /bin/sh when it needs it.
std::string shell_quote(const std::string& s);

}  // namespace scanlab::cli
