#include "sweep_axes.hpp"

#include <CLI/CLI.hpp>

#include <set>
#include <stdexcept>

namespace scanlab::cli {

using namespace scanlab::bench;

void add_axis_flags(CLI::App& app, AxisFlags& flags) {
  // Every op's axis flags are accepted by the parser; axes_from_flags then refuses the ones the op lacks.
  std::set<std::string> names;
  for (const auto& name : op_bench_names()) {
    const auto& bench = find_op_bench(name);
    for (const auto& a : bench.shape_axes) names.insert("--" + a.name);
    for (const auto& a : bench.option_axes) names.insert(a.flag);
  }
  for (const auto& flag : names) app.add_option(flag, flags.text[flag], "axis (see below)");
  app.add_option("--shapes", flags.shapes,
                 "a list of shapes instead of a product of size axes: 8x4096x16x2048,2x4096x16x8192 "
                 "(the op's size axes in order, groups excepted)");
}

std::vector<AxisValues> axes_from_flags(const std::string& op, AxisFlags& flags) {
  const OpBench& bench = find_op_bench(op);
  std::vector<AxisValues> axes;
  std::set<std::string> used;
  if (!flags.shapes.empty()) {
    // --shapes lists the size tuples; the sizes it does not give come from their own axes.
    AxisValues zipped{"shapes", true, {}, {}};
    for (const auto& a : bench.shape_axes)
      if (a.name != "groups") zipped.zipped.push_back(a.name);
    zipped.values = parse_shapes("--shapes", flags.shapes, zipped.zipped);
    for (const auto& name : zipped.zipped) {
      if (!flags.text["--" + name].empty())
        throw std::invalid_argument("--" + name + " and --shapes both set " + name + "; give it in one place");
      used.insert("--" + name);
    }
    axes.push_back(zipped);
  }
  for (const auto& a : bench.shape_axes) {
    const std::string flag = "--" + a.name;
    if (used.count(flag)) continue;
    const std::string& text = flags.text[flag].empty() ? a.default_text : flags.text[flag];
    used.insert(flag);
    AxisValues axis{a.name, true, {}};
    for (auto v : parse_int_axis(flag, text)) axis.values.push_back(v);
    axes.push_back(axis);
  }
  for (const auto& a : bench.option_axes) {
    const std::string& text = flags.text[a.flag].empty() ? a.default_text : flags.text[a.flag];
    used.insert(a.flag);
    AxisValues axis{a.name, false, {}};
    if (a.kind == OptionAxis::Kind::toggle)
      for (bool v : parse_switch_axis(a.flag, text)) axis.values.push_back(v);
    else
      for (const auto& v : parse_choice_axis(a.flag, text, a.choices)) axis.values.push_back(v);
    axes.push_back(axis);
  }
  for (const auto& [flag, text] : flags.text)
    if (!text.empty() && !used.count(flag)) throw std::invalid_argument(flag + " is not an axis of " + op);
  return axes;
}

std::string axes_help() {
  std::string text = "\nAxes per op (default in brackets; each a list 1,2,4 or a range 1024:8192:x2, a:b:+s):\n";
  for (const auto& name : op_bench_names()) {
    const auto& op = find_op_bench(name);
    text += "  " + name + ":";
    for (const auto& a : op.shape_axes) text += " --" + a.name + " [" + a.default_text + "]";
    for (const auto& a : op.option_axes) text += " " + a.flag + " [" + a.default_text + "]";
    text += "\n";
  }
  text +=
      "Switches take on/off lists (on,off runs both); --act-fn takes silu, identity, gelu_tanh, gelu_erf.\n"
      "--direction: fwd (forward), bwd (backward alone, after an untimed forward), fwdbwd (both).\n"
      "Cases are the product of every axis and direction (--shapes: the listed shapes, not a product);\n"
      "--shard i/n keeps case k when k mod n = i.\n";
  return text;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace scanlab::cli
