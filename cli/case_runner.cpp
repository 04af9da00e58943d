#include "case_runner.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>

namespace fs = std::filesystem;

namespace scanlab::cli {

int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": " << e.what() << "\n(see " << app.get_name() << " --help)\n";
    return 2;
  }
}

std::string backend_help() {
  return "where the op runs: reference (the float64 oracle), serial, openmp, cuda (Kokkos spaces compiled into this "
         "binary), auto (the fastest compiled space: cuda, else openmp, else serial) or exec:CMD (an external "
         "implementation: scanlab writes the case directory and runs CMD CASE_DIR OUT_DIR through /bin/sh, see "
         "scripts/exec_example/README.md)";
}

std::string impl_help() {
  return "the kernel configuration: auto (the tuning cache's config when there is one, else the op's heuristic "
         "config) or an implementation name (the heuristic rule for that implementation); `scanlab list` names "
         "them. Ignored by the reference and exec backends";
}

std::vector<TensorSpec> expected_outputs(const std::vector<TensorSpec>& specs) {
  std::vector<TensorSpec> out;
  for (const auto& s : specs)
    if (s.role == TensorRole::output || s.role == TensorRole::gradient) out.push_back(s);
  return out;
}

namespace {

// The last `lines` lines of a text file (the command's captured output).
std::string tail_of(const fs::path& path, int lines) {
  std::ifstream in(path);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (all.empty()) return "(no output)";
  std::size_t pos = all.size();
  if (all.back() == '\n') --pos;
  for (int n = 0; n < lines && pos != std::string::npos && pos > 0; ++n) {
    pos = all.rfind('\n', pos - 1);
  }
  std::string tail = pos == std::string::npos ? all : all.substr(pos + 1);
  if (tail.size() > 4000) tail = "..." + tail.substr(tail.size() - 4000);
  return tail;
}

// Runs `/bin/sh -c 'CMD "$@"' sh ARGS...` with stdout and stderr into log; returns the wait status.
int run_shell(const std::string& command, const std::vector<std::string>& args, const fs::path& log) {
  const std::string script = command + " \"$@\"";
  std::vector<std::string> argv_strings{"sh", "-c", script, "sh"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string log_path = log.string();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("exec backend: fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    FILE* f = std::fopen(log_path.c_str(), "w");
    if (f) {
      dup2(fileno(f), 1);
      dup2(fileno(f), 2);
    }
    execv("/bin/sh", argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("exec backend: waitpid failed: ") + std::strerror(errno));
  }
  return status;
}

std::optional<double> number_field(const nlohmann::json& j, const char* key, const fs::path& file) {
  if (!j.contains(key)) return std::nullopt;
  if (!j.at(key).is_number() || !(j.at(key).get<double>() >= 0))
    throw std::runtime_error(file.string() + ": \"" + key + "\" must be a non-negative number of seconds, got " +
                             j.at(key).dump());
  return j.at(key).get<double>();
}

}  // namespace

RunResult run_exec(const std::string& command, const io::Case& c, const std::vector<TensorSpec>& expected) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = (fs::path(tmp && *tmp ? tmp : "/tmp") / "scanlab-exec-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("exec backend: cannot create a temporary directory from " + pattern + ": " +
                             std::strerror(errno));
  const fs::path work(pattern);
  const fs::path case_dir = work / "case", out_dir = work / "out", log = work / "output.log";
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      if (!std::getenv("SCANLAB_KEEP_EXEC_DIRS")) {
        std::error_code ec;
        fs::remove_all(dir, ec);
      }
    }
  } cleanup{work};

  io::write_case(case_dir.string(), c);
  fs::create_directories(out_dir);
  RunResult r;
  const auto start = std::chrono::steady_clock::now();
  const int status = run_shell(command, {case_dir.string(), out_dir.string()}, log);
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ostringstream msg;
    msg << "exec backend: '" << command << "' ";
    if (WIFSIGNALED(status))
      msg << "was killed by signal " << WTERMSIG(status);
    else
      msg << "exited with status " << WEXITSTATUS(status) << (WEXITSTATUS(status) == 127 ? " (command not found?)" : "");
    msg << "; last lines of its output:\n" << tail_of(log, 15);
    if (WIFEXITED(status) && WEXITSTATUS(status) == kExecUnsupportedStatus)
      throw ExecUnsupported(msg.str() + "\n(exit status " + std::to_string(kExecUnsupportedStatus) +
                            ": the implementation has no equivalent of this case)");
    throw std::runtime_error(msg.str());
  }
  for (const auto& spec : expected) {
    const fs::path file = out_dir / (spec.name + ".npy");
    if (!fs::exists(file))
      throw std::runtime_error("exec backend: '" + command + "' did not write output '" + spec.name + "' (" +
                               spec.name + ".npy, shape " + shape_string(spec.shape) + ") for this " + c.op +
                               " case; last lines of its output:\n" + tail_of(log, 8));
    Tensor t = io::read_npy(file.string());
    if (t.shape != spec.shape)
      throw std::runtime_error("exec backend: " + spec.name + ".npy written by '" + command + "' has shape " +
                               shape_string(t.shape) + ", expected " + shape_string(spec.shape));
    r.outputs[spec.name] = std::move(t);
  }
  // Outputs beyond the descriptor's list (state_space_v1's conv_state passthrough) are read too.
  for (const auto& entry : fs::directory_iterator(out_dir)) {
    if (entry.path().extension() != ".npy") continue;
    const std::string name = entry.path().stem().string();
    if (!r.outputs.count(name)) r.outputs[name] = io::read_npy(entry.path().string());
  }
  const fs::path timing = out_dir / "timing.json";
  if (fs::exists(timing)) {
    std::ifstream in(timing);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
      throw std::runtime_error(timing.string() + " (written by '" + command + "'): invalid JSON: " + e.what());
    }
    if (!j.is_object() || !j.contains("seconds"))
      throw std::runtime_error(timing.string() + " (written by '" + command +
                               "'): expected an object with \"seconds\", e.g. {\"seconds\": 0.0123}");
    r.reported_seconds = number_field(j, "seconds", timing);
    r.reported_forward_seconds = number_field(j, "forward_seconds", timing);
    r.reported_backward_seconds = number_field(j, "backward_seconds", timing);
  }
  return r;
}

RunResult run_case(const io::Case& c, const Backend& backend, const ImplRequest& request) {
  return visit_op(c.op, [&](auto op) {
    using T = decltype(op);
    const auto p = T::Problem::from_case(c.tensors, c.options);
    if (backend.kind == BackendKind::exec) {
      // The case goes out as it came in: same options (seed and note included).
      return run_exec(backend.command, c, expected_outputs(p.tensors()));
    }
    return run_problem<T>(p, c.tensors, backend, request);
  });
}

OracleCheck check_against_oracle(const io::Case& c, const TensorMap& got) {
  return visit_op(c.op, [&](auto op) {
    using T = decltype(op);
    const auto p = T::Problem::from_case(c.tensors, c.options);
    OracleCheck check;
    check.expected = T::reference(p, c.tensors);
    check.bounds = T::error_bound(p, c.tensors);
    check.comparisons = reference::compare_with_bounds(got, check.expected, check.bounds);
    return check;
  });
}

std::string failure_root() {
  const char* env = std::getenv("SCANLAB_FAILURE_DIR");
  return env && *env ? std::string(env) : (fs::path("build") / "failures").string();
}

std::string fresh_failure_dir(const std::string& prefix) {
  static std::atomic<int> counter{0};
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  for (;;) {
    const fs::path dir = fs::path(failure_root()) /
                         (prefix + "-" + stamp + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    if (!fs::exists(dir)) return dir.string();
  }
}

void save_case_dir(const std::string& dir, const io::Case& c, const nlohmann::json& config, const TensorMap* got,
                   const std::string& got_backend) {
  io::write_case(dir, c);
  if (!config.is_null()) {
    std::ofstream out(fs::path(dir) / "config.json");
    out << config.dump(2) << "\n";
    if (!out) throw std::runtime_error(dir + "/config.json: write failed");
  }
  if (got && !got->empty()) io::write_tensors((fs::path(dir) / ("out-" + got_backend)).string(), *got, io::DType::float64);
}

std::optional<nlohmann::json> read_config_json(const std::string& dir) {
  const fs::path path = fs::path(dir) / "config.json";
  if (!fs::exists(path)) return std::nullopt;
  std::ifstream in(path);
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    if (!j.is_object()) throw std::runtime_error(path.string() + ": must hold a JSON object (a kernel config)");
    return j;
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(path.string() + ": invalid JSON: " + e.what());
  }
}

std::string backend_dir_name(const Backend& backend) {
  return backend.kind == BackendKind::exec ? "exec" : to_string(backend.kind);
}

}  // namespace scanlab::cli
