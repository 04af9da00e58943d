// `scanlab check OP [--cases N] [--seed S] [--backend B] [--impl I] [--config JSON] [--max-size E]`: fuzzes N random
// cases of OP (forward, and forward + backward) against the float64 oracle with the properties'
// generators (properties/generators.hpp), under RapidCheck so that a failure is shrunk to a minimal
// case, saved as a case directory and printed with its replay and reproduce lines.
#include <CLI/CLI.hpp>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include <rapidcheck/detail/Configuration.h>
#include <rapidcheck/detail/TestListener.h>

#include "case_runner.hpp"
#include "launch.hpp"
#include "properties/harness.hpp"
#include "sweep_axes.hpp"
#include "verbs.hpp"

namespace scanlab::cli {
namespace {

using namespace scanlab::properties;

struct CheckOptions {
  std::string op;
  int cases = 100;
  std::uint64_t seed = 0;
  Backend backend;
  std::string impl = "random";
  nlohmann::json config_patch = nlohmann::json::object();  // --config: fields laid over each case's config
  std::int64_t max_size = 4000;
  std::string command_line;  // to repeat in the reproduce line
  std::string progress_prefix;  // "rank 1/4: " under mpirun/srun
  LaunchWorld world;            // for the fault-injection hook's rank
};

// The case check is evaluating, written to disk before it runs, so that a crash (a segmentation
// fault in a kernel's host code, an abort) leaves it behind to replay, named on stderr by a signal
// handler; session 37's seed-372 fault on CUDA left nothing. Removed when check ends normally.
class InflightCase {
 public:
  InflightCase(const std::string& op, const Backend& backend, std::uint64_t seed)
      : dir_(failure_root() + "/check-" + op + "-inflight-" + std::to_string(::getpid())),
        note_("the case `scanlab check " + op + " --seed " + std::to_string(seed) + " --backend '" + backend.name() +
              "'` was running when the process died"),
        backend_(backend.name()),
        root_existed_(std::filesystem::exists(failure_root())) {
    // Built here: the handler may only write(2) what is already in memory.
    message_ = "\nscanlab check: crashed in a case; the case it was running is saved: " + dir_ +
               "\nreplay: scanlab replay " + dir_ + " --backend '" + backend_ + "'\n";
    message_pointer_ = message_.c_str();
    message_size_ = message_.size();
    struct sigaction action {};
    action.sa_handler = on_crash;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;  // the second delivery (re-raised below) takes the default action
    for (std::size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &action, &previous_[i]);
  }
  ~InflightCase() {
    for (std::size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &previous_[i], nullptr);
    saved_ = 0;
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    if (!root_existed_) std::filesystem::remove(failure_root(), ignored);  // only if empty
  }
  InflightCase(const InflightCase&) = delete;
  InflightCase& operator=(const InflightCase&) = delete;

  // A case that cannot be written (a full disk, a failure root that is a file) is not the
  // kernel's failure: check warns once and runs on without the net. Another check sharing the
  // root (an MPI rank of the same run) removes it when it ends, if empty, and can do so between
  // create_directories' two steps: so three tries (the mpi test's check --resume saw that race).
  void save(io::Case c, const nlohmann::json& config, int case_number) {
    saved_ = 0;
    c.options["note"] = note_ + " (case " + std::to_string(case_number) + " of the run, shrinking steps counted)";
    for (int attempt = 1; attempt <= 3; ++attempt) {
      try {
        std::filesystem::remove_all(dir_);
        save_case_dir(dir_, c, config);
        saved_ = 1;
        return;
      } catch (const std::exception& e) {
        if (attempt < 3) continue;
        if (!warned_)
          std::fprintf(stderr, "scanlab check: warning: cannot save each case before it runs (%s); a crash would "
                               "leave nothing to replay\n", e.what());
        warned_ = true;
      }
    }
  }

 private:
  static constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  static void on_crash(int signal) {
    if (saved_ && ::write(2, message_pointer_, message_size_) < 0) {
    }
    ::raise(signal);  // SA_RESETHAND: the default action now, the shell's "Segmentation fault"
  }
  static inline const char* message_pointer_ = nullptr;
  static inline std::size_t message_size_ = 0;
  static inline volatile sig_atomic_t saved_ = 0;
  std::string dir_, note_, backend_, message_;
  bool root_existed_, warned_ = false;
  struct sigaction previous_[std::size(kSignals)] {};
};

// What one case contributed, committed only when RapidCheck counts the case as a success of the
// search (not while shrinking).
struct CaseStats {
  std::vector<std::string> tags;
  std::map<std::string, double> ratios;  // tensor -> max |err| / bound
  std::string config;
  bool backward = false;  // the case ran the backward too
};

struct Totals {
  int cases = 0;
  std::map<std::string, int> tags;
  std::map<std::string, std::pair<int, double>> ratios;  // tensor -> (cases, max ratio)
  std::set<std::string> configs;
  double max_ratio = 0;
  int backward_cases = 0;  // passing cases that ran the backward too
};

nlohmann::json to_json(const Totals& t) {
  nlohmann::json ratios = nlohmann::json::object();
  for (const auto& [name, entry] : t.ratios) ratios[name] = {entry.first, entry.second};
  return {{"cases", t.cases},         {"tags", t.tags},           {"ratios", ratios},
          {"configs", t.configs},     {"max_ratio", t.max_ratio}, {"backward_cases", t.backward_cases}};
}

// Adds another rank's totals: counts add up, maxima take the larger, configs unite.
void add_totals(Totals& t, const nlohmann::json& j) {
  t.cases += j.at("cases").get<int>();
  for (const auto& [tag, n] : j.at("tags").items()) t.tags[tag] += n.get<int>();
  for (const auto& [name, entry] : j.at("ratios").items()) {
    auto& mine = t.ratios[name];
    mine.first += entry[0].get<int>();
    mine.second = std::max(mine.second, entry[1].get<double>());
  }
  for (const auto& c : j.at("configs")) t.configs.insert(c.get<std::string>());
  t.max_ratio = std::max(t.max_ratio, j.at("max_ratio").get<double>());
  t.backward_cases += j.value("backward_cases", 0);  // absent from a rank file of an older scanlab
}

// The seed rank r fuzzes: splitmix64 of the base seed and the rank, so ranks never share a stream.
std::uint64_t rank_seed(std::uint64_t base, int rank) {
  std::uint64_t z = base + 0x9E3779B97F4A7C15ull * std::uint64_t(rank + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// What one check run found (one process, or one rank of several).
struct CheckResult {
  Totals totals;
  int failures = 0;
  std::string text;  // the failure (shrunk case, saved directory, replay and reproduce lines)
};

class Progress : public rc::detail::TestListener {
 public:
  Progress(const CheckOptions& o, Totals& totals, std::optional<CaseStats>& pending)
      : options_(o), totals_(totals), pending_(pending), tty_(isatty(2)) {}

  void onTestCaseFinished(const rc::detail::CaseDescription& description) override {
    if (description.result.type == rc::detail::CaseResult::Type::Success && pending_) {
      ++totals_.cases;
      for (const auto& t : pending_->tags) ++totals_.tags[t];
      for (const auto& [name, ratio] : pending_->ratios) {
        auto& entry = totals_.ratios[name];
        ++entry.first;
        entry.second = std::max(entry.second, ratio);
        totals_.max_ratio = std::max(totals_.max_ratio, ratio);
      }
      if (!pending_->config.empty()) totals_.configs.insert(pending_->config);
      if (pending_->backward) ++totals_.backward_cases;
    }
    pending_.reset();
    show(false);
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    ++shrink_tries_;
    if (accepted) ++shrinks_;
    pending_.reset();
    show(false);
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override { show(true); }

 private:
  // A long exec command would push the counts off the line.
  static std::string short_name(const Backend& b) {
    const std::string name = b.name();
    return name.size() <= 40 ? name : name.substr(0, 37) + "...";
  }

  void show(bool final) {
    const auto now = std::chrono::steady_clock::now();
    const int done = totals_.cases;
    if (!final && now - last_ < std::chrono::milliseconds(tty_ ? 100 : 5000)) return;
    last_ = now;
    char line[256];
    if (shrink_tries_ > 0)
      std::snprintf(line, sizeof line, "check %s on %s: case %d failed; shrinking: %d tries, %d accepted",
                    options_.op.c_str(), short_name(options_.backend).c_str(), done + 1, shrink_tries_, shrinks_);
    else
      std::snprintf(line, sizeof line, "check %s on %s: %d/%d cases, max err/bound %.3g", options_.op.c_str(),
                    short_name(options_.backend).c_str(), done, options_.cases, totals_.max_ratio);
    std::fprintf(stderr, tty_ ? "\r%s%-100s%s" : "%s%s%s", options_.progress_prefix.c_str(), line,
                 final || !tty_ ? "\n" : "");
    std::fflush(stderr);
  }

  const CheckOptions& options_;
  Totals& totals_;
  std::optional<CaseStats>& pending_;
  bool tty_;
  int shrink_tries_ = 0, shrinks_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

std::string percent(int n, int total) {
  char s[32];
  std::snprintf(s, sizeof s, "%d (%.0f%%)", n, total ? 100.0 * n / total : 0.0);
  return s;
}

void print_summary(const CheckOptions& o, const Totals& totals, int failures, const std::string& failure_text) {
  const std::string patch = o.config_patch.empty() ? "" : ", config " + o.config_patch.dump();
  std::printf("\nscanlab check %s: %d cases on %s (seed %llu, impl %s%s, max-size %lld): %s\n", o.op.c_str(), totals.cases,
              o.backend.name().c_str(), static_cast<unsigned long long>(o.seed), o.impl.c_str(), patch.c_str(),
              static_cast<long long>(o.max_size), failures ? "FAIL" : "PASS");
  struct Group {
    const char* title;
    std::function<bool(const std::string&)> member;
  };
  auto prefixed = [](std::initializer_list<const char*> prefixes) {
    std::vector<std::string> p(prefixes.begin(), prefixes.end());
    return [p](const std::string& tag) {
      for (const auto& x : p)
        if (tag.rfind(x, 0) == 0) return true;
      return false;
    };
  };
  const Group groups[] = {
      {"options mix", prefixed({"option:", "act_fn:"})},
      {"value regimes", [](const std::string& t) {
         return t.find(':') != std::string::npos &&
                !(t.rfind("option:", 0) == 0 || t.rfind("act_fn:", 0) == 0 || t.rfind("seqlen:", 0) == 0 ||
                  t.rfind("dstate:", 0) == 0 || t.rfind("dim:", 0) == 0 || t.rfind("impl:", 0) == 0 ||
                  t.rfind("config:", 0) == 0 || t.rfind("backend:", 0) == 0);
       }},
      {"size edges", prefixed({"seqlen:", "dstate:", "dim:"})},
      {"variants and configs", prefixed({"impl:", "config:"})},
  };
  for (const auto& g : groups) {
    std::string row;
    int column = 0;
    for (const auto& [tag, n] : totals.tags) {
      if (!g.member(tag)) continue;
      char cell[128];
      std::snprintf(cell, sizeof cell, "%-34s", (tag + " " + percent(n, totals.cases)).c_str());
      row += (column ? " " : "  ") + std::string(cell);
      if (++column == 3) {
        row += "\n";
        column = 0;
      }
    }
    if (column) row += "\n";
    if (!row.empty()) std::printf("%s:\n%s", g.title, row.c_str());
  }
  if (!totals.configs.empty()) std::printf("distinct configs run: %zu\n", totals.configs.size());
  std::printf("%-20s %8s %14s\n", "tensor", "cases", "max err/bound");
  for (const auto& [name, entry] : totals.ratios)
    std::printf("  %-18s %8d %14.4g\n", name.c_str(), entry.first, entry.second);
  std::printf("backward: %s of the cases\n", percent(totals.backward_cases, totals.cases).c_str());
  // A fixed --impl or --config that no case with a backward can run leaves the gradients unchecked
  // while the forward passes: say so, so that a PASS is not read as covering them.
  if (totals.cases > 0 && totals.backward_cases == 0)
    std::printf("warning: no passing case ran the backward (every case with one was skipped or none was drawn): "
                "the gradients were not checked\n");
  std::printf("failures: %d\n", failures);
  if (!failure_text.empty()) std::printf("%s\n", failure_text.c_str());
}

// Counts a skipped case's reasons, each line of invalid_reason() one reason, without the config
// and case that resolve_config's "… cannot run this case on BACKEND: REASONS" names, so that cases
// skipped for one reason count together.
void count_skip_reasons(std::map<std::string, int>& reasons, const std::string& message) {
  const std::string marker = "cannot run this case on ";
  std::string why = message;
  if (const auto at = message.find(marker); at != std::string::npos)
    if (const auto colon = message.find(": ", at + marker.size()); colon != std::string::npos) why = message.substr(colon + 2);
  std::istringstream lines(why);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) ++reasons[line];
}

// The most frequent reasons cases were skipped, one line each with its count.
std::string top_reasons(const std::map<std::string, int>& reasons, std::size_t shown) {
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [why, n] : reasons) by_count.emplace_back(n, why);
  // stable: reasons with equal counts keep the map's order, so the lines do not change between runs
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (std::size_t i = 0; i < by_count.size() && i < shown; ++i) {
    std::string why = by_count[i].second;
    if (why.size() > 200) why = why.substr(0, 197) + "...";
    out += "\n  " + std::to_string(by_count[i].first) + "x " + why;
  }
  if (by_count.size() > shown) {
    const std::size_t others = by_count.size() - shown;
    out += "\n  (" + std::to_string(others) + (others == 1 ? " other reason)" : " other reasons)");
  }
  return out;
}

template <class T>
CheckResult check_op(CheckOptions& o) {
  using P = typename T::Problem;
  GenRequest request = base_request<T>();
  request.backward = GenRequest::Backward::either;
  request.limits.max_elements = o.max_size;
  request.limits.long_seqlen = std::min<std::int64_t>(request.limits.long_seqlen, std::max<std::int64_t>(2, o.max_size / 2));

  CheckResult out;
  Totals& totals = out.totals;
  std::optional<CaseStats> pending;
  int discarded_invalid = 0, discarded_unsupported = 0;
  std::map<std::string, int> skip_reasons;  // why the --impl / --config could not run a case
  const std::string property_name = "scanlab check " + o.op;
  // A case the --impl / --config cannot run: counted with its reasons and discarded (RC_DISCARD throws).
  auto skip_invalid = [&](const std::invalid_argument& e) {
    ++discarded_invalid;
    count_skip_reasons(skip_reasons, e.what());
    RC_DISCARD(e.what());
  };
  InflightCase inflight(o.op, o.backend, o.seed);
  int evaluated = 0;  // cases evaluated, shrinking steps and discarded ones included
  auto property = [&] {
    const GeneratedCase<P> gc = *gen_case<P>(request);
    const P& p = gc.problem;
    CaseStats stats;
    stats.tags = gc.tags;
    stats.backward = p.with_backward;
    FailureRecord record{as_case<T>(p, gc.inputs), nullptr, o.backend.name(), {}, "", property_name};
    TensorMap got;
    ++evaluated;
    try {
      if (o.backend.is_kokkos()) {
        typename T::Config config;
        if (o.impl == "random") {
          config = *gen_config<T>(p, o.backend.kind);
        } else {
          try {
            config = resolve_config<T>(p, o.backend.kind, {o.impl});
          } catch (const std::invalid_argument& e) {
            skip_invalid(e);
          }
        }
        if (!o.config_patch.empty()) {
          try {
            config = lay_config_over<T>(p, o.backend.kind, config, o.config_patch);
          } catch (const std::invalid_argument& e) {
            skip_invalid(e);
          }
        }
        record.config = config.to_json();
        stats.config = record.config.dump();
        stats.tags.push_back("impl:" + T::impl_of(config));
        for (const auto& axis : T::config_axes())
          if (axis.specialisation && record.config.contains(axis.field))
            stats.tags.push_back("config:" + axis.field + "=" + record.config[axis.field].dump());
        inflight.save(record.c, record.config, evaluated);
        fault_point(o.world, "check_case_" + std::to_string(evaluated));
        got = T::run(p, gc.inputs, o.backend.kind, config);
      } else {
        inflight.save(record.c, nullptr, evaluated);
        fault_point(o.world, "check_case_" + std::to_string(evaluated));
        got = run_problem<T>(p, gc.inputs, o.backend).outputs;
      }
    } catch (const ExecUnsupported& e) {
      ++discarded_unsupported;  // not a failure: the implementation says it has no such option
      RC_DISCARD(e.what());
    } catch (const std::exception& e) {
      record.message = std::string(o.backend.kind == BackendKind::exec ? "" : "kernel threw: ") + e.what();
      fail_case(record);
    }
    const Oracle oracle_result = oracle<T>(p, gc.inputs);
    const auto rows = reference::compare_with_bounds(got, oracle_result.expected, oracle_result.bounds);
    for (const auto& row : rows) stats.ratios[row.name] = row.pass() ? row.max_ratio : std::max(row.max_ratio, 1e300);
    if (!reference::all_pass(rows)) {
      record.got = got;
      record.message = "vs oracle on " + o.backend.name() +
                       (record.config.is_null() ? "" : " " + record.config.dump()) + ":\n" + reference::describe(rows);
      fail_case(record);
    }
    pending = stats;
  };

  rc::detail::TestParams params;
  params.seed = o.seed;
  params.maxSuccess = o.cases;
  params.maxSize = 100;
  // An exec implementation may decline most option mixes (exit status 3, mamba_ssm has no initial
  // state, no final-state gradient, no time-invariant B or C); a declined case costs a process
  // start, not a run, so check keeps drawing until --cases cases ran.
  // Cases are skipped, not failed, where an exec implementation has no equivalent or a fixed
  // --impl / --config cannot run them (a config with bwd_state_interleave 4 runs dstate 4, 8, ...
  // only): such runs draw on until --cases pass instead of giving up at RapidCheck's usual ratio.
  const bool fixed_config = o.impl != "random" || !o.config_patch.empty();
  params.maxDiscardRatio = o.backend.kind == BackendKind::exec ? 1000 : fixed_config ? 100 : 10;
  rc::detail::TestMetadata metadata;
  metadata.id = property_name;
  metadata.description = property_name;
  Progress progress(o, totals, pending);
  clear_failure();
  // RapidCheck's configuration (and its "Using configuration" line) only when RC_PARAMS may hold a
  // reproduce= for this check.
  static const std::unordered_map<std::string, rc::detail::Reproduce> no_reproduce;
  const auto& reproduce_map = std::getenv("RC_PARAMS") ? rc::detail::configuration().reproduce : no_reproduce;
  const rc::detail::TestResult result =
      rc::detail::checkProperty(rc::detail::toProperty(property), metadata, params, progress, reproduce_map);

  int failures = 0;
  std::string text;
  if (result.is<rc::detail::FailureResult>()) {
    failures = 1;
    const auto& f = result.get<rc::detail::FailureResult>();
    rc::detail::Configuration reproduce_config;
    reproduce_config.reproduce[metadata.id] = f.reproduce;
    std::string reproduce = rc::detail::configToMinimalString(reproduce_config);
    if (auto pos = reproduce.find(" seed="); pos != std::string::npos) reproduce.erase(pos);
    std::ostringstream s;
    s << "FAILED after " << f.numSuccess << " passing cases; the shrunk case:\n";
    if (auto record = last_failure()) {
      s << record->message << "\n";
      const std::string dir = save_failure(*record, o.seed, "RC_PARAMS=\"" + reproduce + "\" " + o.command_line);
      s << "saved: " << dir << "\n";
      s << "replay: scanlab replay " << dir << " --backend '" << o.backend.name() << "'\n";
    } else {
      s << f.description << "\n";
    }
    s << "reproduce: RC_PARAMS=\"" << reproduce << "\" " << o.command_line;
    text = s.str();
  } else if (result.is<rc::detail::GaveUpResult>()) {
    failures = 1;
    text = "gave up: " + result.get<rc::detail::GaveUpResult>().description +
           (discarded_invalid ? " (" + std::to_string(discarded_invalid) + " cases the --impl config cannot run)" : "") +
           (discarded_unsupported ? " (" + std::to_string(discarded_unsupported) +
                                        " cases the exec implementation has no equivalent of, exit status 3)" : "");
  } else if (result.is<rc::detail::Error>()) {
    failures = 1;
    text = "error: " + result.get<rc::detail::Error>().description;
  } else if (!reproduce_map.empty()) {
    text = reproduce_map.count(metadata.id) ? "reproduced case passes now" : "RC_PARAMS reproduce= names no case of " + property_name;
  }
  if (discarded_invalid && !failures)
    text += (text.empty() ? "" : "\n") + std::to_string(discarded_invalid) +
            " generated cases were skipped: the --impl config cannot run them; the most frequent reasons (a case "
            "can have several):" +
            top_reasons(skip_reasons, 3);
  if (discarded_unsupported && !failures)  // a failure's text (a give-up) already counts them
    text += (text.empty() ? "" : "\n") + std::to_string(discarded_unsupported) +
            " generated cases were skipped: the exec implementation has no equivalent (exit status 3)";
  out.failures = failures;
  out.text = text;
  return out;
}

int check_verb(int argc, char** argv) {
  CLI::App app{"Fuzzes OP against the float64 oracle: N random cases (sizes, options, value regimes and, with --impl "
               "random, kernel configs drawn by the properties' generators; about half the cases run the backward "
               "too), each compared element by element with the oracle's error bound. A progress line goes to "
               "stderr, a summary table to stdout: how many cases ran the backward (with a warning when none did, e.g. "
               "when a --config no backward case can run leaves the gradients unchecked) and, for cases skipped "
               "because the --impl / --config cannot run them, the most frequent reasons. A failing case is shrunk "
               "by RapidCheck to a minimal one and saved as a case directory under $SCANLAB_FAILURE_DIR (default "
               "build/failures/), with the `scanlab replay` "
               "line and an RC_PARAMS=\"reproduce=...\" line that repeats this exact case (with the same flags). "
               "Each case is written under $SCANLAB_FAILURE_DIR before it runs, so a crash (a segmentation fault, "
               "an abort) leaves the case it was running, named on stderr with its replay line; a check that ends "
               "normally removes it. An exec implementation that exits with status 3 (no equivalent of the case) "
               "has that case skipped "
               "and counted in the summary. Exit status: 0 pass, 1 a failing case, 2 a usage error.",
               "scanlab check"};
  CheckOptions o;
  std::string backend_text = "auto", seed_text;
  app.add_option("OP", o.op, "selective_scan, state_space_v1, s7_scan or s7_inner")->required();
  app.add_option("--cases", o.cases, "how many passing cases make a pass")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--seed", seed_text, "RapidCheck's seed (default: a random one, printed in the summary)");
  app.add_option("--backend", backend_text, backend_help())->capture_default_str();
  app.add_option("--impl", o.impl,
                 "random (a random valid config per case, drawn from the registry's heuristic and candidates and the "
                 "config values the properties fuzz, so every implementation and specialisation is exercised), auto "
                 "(the config `scanlab run` would use) or an implementation name (the heuristic config with it; cases "
                 "it cannot run are skipped). Ignored by the reference and exec backends")
      ->capture_default_str();
  std::string config_text;
  app.add_option("--config", config_text,
                 "JSON object of config fields laid over each case's config (the --impl config, or each random draw), "
                 "e.g. '{\"fast_activations\":1}' with --impl tiled; cases where the result cannot run are skipped "
                 "and counted. Ignored by the reference and exec backends");
  app.add_option("--max-size", o.max_size, "the most elements the largest tensor of a case may hold")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{16}, std::int64_t{1} << 30));
  std::string gather_dir;
  bool resume = false;
  double gather_timeout_s = 86400;
  app.add_option("--gather", gather_dir,
                 "under mpirun/srun: the directory where each rank writes its summary for rank 0 (default "
                 "scanlab-check-OP-seedS.ranks)");
  app.add_flag("--resume", resume, "under mpirun/srun: ranks whose summary of this same check exists do not run again");
  app.add_option("--gather-timeout", gather_timeout_s, "under mpirun/srun: seconds rank 0 waits for the other ranks")
      ->capture_default_str();
  app.footer("Under mpirun or srun (K ranks, --seed required) rank r fuzzes --cases cases of seed S mixed with r, so K "
             "ranks run K x --cases distinct cases; rank 0 prints the combined summary, each failure with its rank's "
             "reproduce line.");
  if (int code = parse_command_line(app, argc, argv); code >= 0) return code;
  o.backend = parse_backend(backend_text);
  if (!config_text.empty()) {
    o.config_patch = nlohmann::json::parse(config_text, nullptr, false);
    if (!o.config_patch.is_object()) {
      std::fprintf(stderr, "scanlab check: --config must be a JSON object, got '%s'\n", config_text.c_str());
      return 2;
    }
  }
  if (seed_text.empty()) {
    o.seed = (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  } else {
    try {
      std::size_t used = 0;
      o.seed = std::stoull(seed_text, &used);
      if (used != seed_text.size()) throw std::invalid_argument(seed_text);
    } catch (const std::exception&) {
      std::fprintf(stderr, "scanlab check: --seed must be a non-negative integer, got '%s'\n", seed_text.c_str());
      return 2;
    }
  }
  const LaunchWorld world = detect_launch_world();
  o.world = world;
  const std::uint64_t base_seed = o.seed;
  if (world.distributed()) {
    // Each rank fuzzes its own seed, so K ranks run K x --cases distinct cases; a failure's
    // reproduce line carries the rank's seed and repeats it in one process.
    if (seed_text.empty())
      throw std::invalid_argument("under " + world.launcher + " give --seed S: the ranks share no channel to agree on a "
                                  "random one (rank r fuzzes seed S mixed with r)");
    o.seed = rank_seed(base_seed, world.rank);
    o.progress_prefix = "rank " + std::to_string(world.rank) + "/" + std::to_string(world.size) + ": ";
    if (gather_dir.empty()) gather_dir = "scanlab-check-" + o.op + "-seed" + std::to_string(base_seed) + ".ranks";
  }
  std::string quoted_backend = o.backend.name();
  o.command_line = "scanlab check " + o.op + " --seed " + std::to_string(o.seed) + " --backend '" + quoted_backend +
                   "' --impl " + o.impl +
                   (o.config_patch.empty() ? "" : " --config " + shell_quote(o.config_patch.dump())) +
                   " --max-size " + std::to_string(o.max_size);
  const nlohmann::json identity = {{"op", o.op},           {"base_seed", base_seed}, {"cases", o.cases},
                                   {"backend", o.backend.name()}, {"impl", o.impl}, {"config", o.config_patch},
                                   {"max_size", o.max_size},
                                   {"ranks", world.size}};
  const std::string rank_path = gather_dir + "/rank-" + std::to_string(world.rank) + ".json";
  CheckResult result;
  nlohmann::json previous;
  if (world.distributed() && resume && std::filesystem::exists(rank_path)) {
    std::ifstream in(rank_path);
    previous = nlohmann::json::parse(in, nullptr, false);
    if (previous.is_discarded() || previous.value("identity", nlohmann::json()) != identity)
      throw std::invalid_argument("--resume: " + rank_path + " is not from this check (" + identity.dump() +
                                  "); move it away or drop --resume");
    std::fprintf(stderr, "%skept the finished result in %s (--resume)\n", o.progress_prefix.c_str(), rank_path.c_str());
    add_totals(result.totals, previous["totals"]);
    result.failures = previous["failures"].get<int>();
    result.text = previous["text"].get<std::string>();
  } else {
    result = visit_op(o.op, [&](auto op) {
      using T = decltype(op);
      require_known_impl<T>(o.impl, "--impl", {"random", "auto"});  // before any case is drawn
      if (!o.config_patch.empty()) {  // unknown fields and wrong types before any case is drawn
        nlohmann::json probe = typename T::Config().to_json();
        probe.update(o.config_patch);
        config_from_json<T>(probe);
      }
      return check_op<T>(o);
    });
  }
  if (!world.distributed()) {
    print_summary(o, result.totals, result.failures, result.text);
    return result.failures ? 1 : 0;
  }
  fault_point(world, "before_check_summary");
  write_file_atomically(rank_path, nlohmann::json{{"identity", identity},
                                                  {"rank", world.rank},
                                                  {"seed", o.seed},
                                                  {"totals", to_json(result.totals)},
                                                  {"failures", result.failures},
                                                  {"text", result.text}}
                                           .dump(1) + "\n");
  if (world.rank != 0) return result.failures ? 1 : 0;
  // Rank 0: every rank's summary, combined.
  std::vector<std::string> paths;
  for (int r = 0; r < world.size; ++r) paths.push_back(gather_dir + "/rank-" + std::to_string(r) + ".json");
  const auto missing = wait_for_rank_files(paths, gather_timeout_s, "check summary");
  CheckResult all;
  std::string texts;
  for (int r = 0; r < world.size; ++r) {
    if (std::find(missing.begin(), missing.end(), r) != missing.end()) continue;
    std::ifstream in(paths[std::size_t(r)]);
    const auto j = nlohmann::json::parse(in);
    add_totals(all.totals, j["totals"]);
    all.failures += j["failures"].get<int>();
    if (!j["text"].get<std::string>().empty())
      texts += "rank " + std::to_string(r) + " (seed " + std::to_string(j["seed"].get<std::uint64_t>()) + "): " +
               j["text"].get<std::string>() + "\n";
  }
  CheckOptions summary = o;
  summary.seed = base_seed;
  summary.command_line.clear();
  std::printf("\n%d ranks (%s), rank r fuzzing seed %llu mixed with r; summaries in %s/\n", world.size,
              world.launcher.c_str(), static_cast<unsigned long long>(base_seed), gather_dir.c_str());
  if (!missing.empty()) {
    std::string list;
    for (int r : missing) list += (list.empty() ? "" : ",") + std::to_string(r);
    texts += "no summary from rank(s) " + list + " (killed?): re-run the same command with --resume to run only those\n";
    all.failures += int(missing.size());
  }
  print_summary(summary, all.totals, all.failures, texts);
  return all.failures ? 1 : 0;
}

const bool registered = register_verb(
    {"check", "fuzz an op against the float64 oracle; shrink, save and print failures", check_verb});

}  // namespace
}  // namespace scanlab::cli
