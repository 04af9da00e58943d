// `scanlab list`: the registry — ops × implementations × the backends compiled into this binary —
// and the fields of each op's kernel config with their defaults.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "case_runner.hpp"
#include "verbs.hpp"

namespace scanlab::cli {
namespace {

int list_verb(int argc, char** argv) {
  CLI::App app{"Lists the ops, their kernel implementations and the backends compiled into this binary, then the "
               "fields of each op's kernel config (what --impl and config.json choose; default values shown). "
               "Every op also runs on the reference backend (the float64 oracle) and on exec:CMD.",
               "scanlab list"};
  if (int code = parse_command_line(app, argc, argv); code >= 0) return code;

  std::string backends = "reference";
  for (auto kind : compiled_kokkos_backends()) backends += " " + to_string(kind);
  backends += " exec:CMD";
  std::printf("%-16s %-28s %s\n", "op", "implementations", "backends");
  for (const auto& op : op_names()) {
    visit_op(op, [&](auto traits) {
      using T = decltype(traits);
      std::string impls;
      for (const auto& i : T::implementations()) impls += (impls.empty() ? "" : ", ") + i;
      std::printf("%-16s %-28s %s\n", op.c_str(), impls.c_str(), backends.c_str());
      return 0;
    });
  }
  std::printf("\nconfig fields (default values):\n");
  for (const auto& op : op_names()) {
    visit_op(op, [&](auto traits) {
      using T = decltype(traits);
      const nlohmann::json defaults = typename T::Config{}.to_json();
      std::printf("  %s:\n", op.c_str());
      // config_fields() names each field, optionally followed by ": what it means".
      for (const auto& entry : T::config_fields()) {
        const auto colon = entry.find(':');
        const std::string field = entry.substr(0, colon);
        std::string meaning = colon == std::string::npos ? "" : entry.substr(colon + 1);
        while (!meaning.empty() && meaning.front() == ' ') meaning.erase(0, 1);
        const std::string value = defaults.contains(field) ? defaults[field].dump() : "?";
        for (const auto& axis : T::config_axes())
          if (axis.field == field && axis.specialisation)
            meaning += meaning.empty() ? "(compile-time specialisation)" : " (compile-time specialisation)";
        std::printf("    %-28s %-12s %s\n", field.c_str(), value.c_str(), meaning.c_str());
      }
      return 0;
    });
  }
  std::printf("\n--impl auto uses the tuning cache's config when there is one, else the op's heuristic config;\n"
              "--impl NAME the heuristic config with implementation NAME; replay uses a case's config.json.\n");
  return 0;
}

const bool registered =
    register_verb({"list", "ops x implementations x backends compiled in, and each config's fields", list_verb});

}  // namespace
}  // namespace scanlab::cli
