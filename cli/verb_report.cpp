// `scanlab report FILES... --out DIR`: runs reports/report.py with the project's Python (the
// wrapper exports SCANLAB_PYTHON, the venv with numpy and matplotlib that scripts/setup.sh makes).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "verbs.hpp"

extern char** environ;

namespace {

bool readable(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

// reports/report.py beside the source tree: $SCANLAB_ROOT (scripts/env.sh exports it), else two
// levels above the executable (build/<preset>/scanlab), else the working directory.
std::string report_script() {
  std::vector<std::string> candidates;
  if (const char* root = std::getenv("SCANLAB_ROOT")) candidates.push_back(std::string(root) + "/reports/report.py");
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    std::string dir(exe, std::size_t(n));
    for (int up = 0; up < 3 && dir.find('/') != std::string::npos; ++up) {
      dir = dir.substr(0, dir.rfind('/'));
      candidates.push_back(dir + "/reports/report.py");
    }
  }
  candidates.push_back("reports/report.py");
  for (const auto& c : candidates)
    if (readable(c)) return c;
  std::string tried;
  for (const auto& c : candidates) tried += "\n  " + c;
  throw std::runtime_error("cannot find reports/report.py (set SCANLAB_ROOT to the source tree); tried:" + tried);
}

int run_report(int argc, char** argv) {
  if (argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::printf(
        "usage: scanlab report FILES... --out DIR [--ceilings CEILINGS.json]\n\n"
        "Roofline (measured memory, L2, FP32 and SFU ceilings; one dot per op, shape and implementation; the\n"
        "binding ceiling marked), tables per op, speedup tables against each peer present in the files (only\n"
        "where the peer's result agrees), scaling plots (time against L, D and N), as DIR/report.md,\n"
        "DIR/report.html, DIR/figures/*.png|svg and DIR/points.json (every plotted point and table cell).\n"
        "FILES are sweep JSONs from scanlab sweep / merge and the peer runners (scripts/peers/).\n"
        "Runs reports/report.py with $SCANLAB_PYTHON (set by ./scanlab; else python3).\n");
    return 0;
  }
  const char* python_env = std::getenv("SCANLAB_PYTHON");
  const std::string python = python_env && *python_env ? python_env : "python3";
  std::vector<std::string> args{python, report_script()};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  pid_t pid = 0;
  const int status = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, cargs.data(), environ);
  if (status != 0)
    throw std::runtime_error("cannot start " + python + " (scripts/setup.sh python makes the venv; ./scanlab sets "
                             "SCANLAB_PYTHON to it)");
  int wait_status = 0;
  if (waitpid(pid, &wait_status, 0) < 0) throw std::runtime_error("waitpid failed for " + python);
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  std::fprintf(stderr, "scanlab report: %s was killed by signal %d\n", python.c_str(), WTERMSIG(wait_status));
  return 1;
}

const bool registered = scanlab::cli::register_verb(
    {"report", "roofline, peer speedup tables and scaling plots from sweep JSONs (md, html, png, svg)", run_report});

}  // namespace
