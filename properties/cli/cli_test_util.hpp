// Helpers for the CLI tests: run this very binary (/proc/self/exe) as a subprocess, so exit codes,
// stdout and stderr are what a user sees; make scratch directories and case directories.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/io/case_dir.hpp"

namespace scanlab::cli_test {

namespace fs = std::filesystem;

struct CliResult {
  int code = -1;
  std::string out, err;
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline fs::path scratch_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("scanlab-cli-test-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

inline std::string self_exe() { return fs::read_symlink("/proc/self/exe").string(); }

// Runs `scanlab ARGS...` with extra environment assignments ("NAME=value").
inline CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() / ("scanlab-cli-run-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path out = dir / ("out" + std::to_string(counter)), err = dir / ("err" + std::to_string(counter));
  ++counter;
  const std::string exe = self_exe();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* o = std::fopen(out.c_str(), "w");
    FILE* e = std::fopen(err.c_str(), "w");
    dup2(fileno(o), 1);
    dup2(fileno(e), 2);
    for (const auto& assignment : env) putenv(const_cast<char*>(assignment.c_str()));
    std::vector<char*> argv{const_cast<char*>(exe.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

inline std::string describe(const CliResult& r) {
  return "exit " + std::to_string(r.code) + "\n--- stdout:\n" + r.out + "\n--- stderr:\n" + r.err;
}

// An executable shell script in dir; returns its path.
inline std::string write_script(const fs::path& dir, const std::string& name, const std::string& body) {
  const fs::path p = dir / name;
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(p, fs::perms::owner_all);
  return p.string();
}

// The dtype a .npy file declares ("<f4", "<f8").
inline std::string npy_descr(const fs::path& p) {
  const std::string text = read_file(p);
  const auto at = text.find("'descr'");
  if (at == std::string::npos) return "?";
  const auto open = text.find('\'', at + 7);
  const auto close = text.find('\'', open + 1);
  return text.substr(open + 1, close - open - 1);
}

}  // namespace scanlab::cli_test
