// The CLI verbs (DESIGN.md's table). Each verb lives in its own cli/verb_*.cpp and registers
// itself here, so adding one touches no shared switch.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace scanlab::cli {

struct Verb {
  std::string name;
  std::string summary;  // one line for `scanlab --help`
  // argv[0] is "scanlab VERB"; returns the process exit code.
  std::function<int(int argc, char** argv)> run;
};

// Verbs register from static initialisers in their own translation units.
bool register_verb(Verb verb);
int dispatch(int argc, char** argv);

}  // namespace scanlab::cli
