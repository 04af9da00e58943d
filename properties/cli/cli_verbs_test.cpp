// The CLI verbs run, check, replay and list, driven as a user drives them: this binary run as a
// subprocess, exit codes and messages checked. The exec protocol is exercised with scanlab itself
// as the external implementation (a shell script calling `scanlab run`), so no Python is needed;
// scripts/exec_example is fuzzed by properties/cli/exec_example_test.sh.
#include <gtest/gtest.h>

#include <csignal>
#include <regex>

#include "cli/case_runner.hpp"
#include "cli_test_util.hpp"
#include "properties/generators.hpp"
#include "reference/error_bound.hpp"

namespace scanlab::cli_test {
namespace {

using cli::OpTraits;

// A small s7_scan case with every option, backward included.
io::Case s7_case() {
  S7ScanProblem p;
  p.batch = 2; p.dim = 3; p.dstate = 4; p.seqlen = 9;
  p.has_bias = p.has_initial_state = p.with_backward = p.has_dlast_state = true;
  return {"s7_scan", p.options_json(), properties::make_inputs(p, {{"A", "normal"}}, 7)};
}

io::Case selective_scan_case() {
  SelectiveScanProblem p;
  p.batch = 2; p.dim = 4; p.groups = 2; p.dstate = 3; p.seqlen = 7;
  p.has_D = p.has_z = p.has_delta_bias = p.delta_softplus = p.has_initial_state = true;
  p.with_backward = p.has_dlast_state = true;
  return {"selective_scan", p.options_json(),
          properties::make_inputs(p, {{"delta", "normal"}, {"A", "normal"}, {"z", "normal"}}, 3)};
}

fs::path write_case_dir(const fs::path& dir, const io::Case& c) {
  io::write_case(dir.string(), c);
  return dir;
}

TEST(CliRun, WritesFloat64ForReferenceAndFloat32ForKernelsWithinTheBound) {
  const auto dir = write_case_dir(scratch_dir("run") / "case", s7_case());
  const auto c = io::read_case(dir.string());
  const auto p = S7ScanProblem::from_case(c.tensors, c.options);
  const auto expected_names = cli::expected_outputs(p.tensors());
  auto r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "reference"});
  ASSERT_EQ(r.code, 0) << describe(r);
  for (const auto& spec : expected_names) {
    const fs::path file = dir / "out-reference" / (spec.name + ".npy");
    ASSERT_TRUE(fs::exists(file)) << file;
    EXPECT_EQ(npy_descr(file), "<f8") << file;
  }
  const TensorMap oracle = io::read_tensors((dir / "out-reference").string());
  const TensorMap bounds = reference::s7_scan_error_bound(p, c.tensors);
  for (auto kind : compiled_kokkos_backends()) {
    const std::string b = to_string(kind);
    r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", b});
    ASSERT_EQ(r.code, 0) << describe(r);
    EXPECT_NE(r.out.find("with config {"), std::string::npos) << r.out;
    for (const auto& spec : expected_names) EXPECT_EQ(npy_descr(dir / ("out-" + b) / (spec.name + ".npy")), "<f4");
    const auto rows = reference::compare_with_bounds(io::read_tensors((dir / ("out-" + b)).string()), oracle, bounds);
    EXPECT_EQ(rows.size(), expected_names.size());
    EXPECT_TRUE(reference::all_pass(rows)) << b << "\n" << reference::describe(rows);
  }
  const fs::path custom = scratch_dir("run-out");
  r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "serial", "--out", custom.string()});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(fs::exists(custom / "out.npy"));
  EXPECT_TRUE(fs::exists(custom / "dinitial_state.npy"));
}

TEST(CliRun, UsageErrorsExitTwoWithAClearMessage) {
  const auto dir = write_case_dir(scratch_dir("usage") / "case", s7_case());
  auto r = run_cli({"run", "selective_scan", "--case", dir.string()});
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("holds op 's7_scan', not 'selective_scan'"), std::string::npos) << r.err;

  r = run_cli({"run", "s7_scann", "--case", dir.string()});
  EXPECT_EQ(r.code, 2);
  for (const char* op : {"selective_scan", "state_space_v1", "s7_scan", "s7_inner"})
    EXPECT_NE(r.err.find(op), std::string::npos) << "unknown-op message should list " << op << ": " << r.err;

  r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "gpu"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown backend 'gpu'"), std::string::npos) << r.err;

  r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "serial", "--impl", "fastest"});
  EXPECT_EQ(r.code, 2);
  for (const auto& impl : OpTraits<S7ScanProblem>::implementations())
    EXPECT_NE(r.err.find(impl), std::string::npos) << "unknown-impl message should list " << impl << ": " << r.err;

  r = run_cli({"run", "s7_scan"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--case"), std::string::npos) << r.err;
}

TEST(CliRun, NamesTheBrokenFile) {
  const fs::path root = scratch_dir("broken");
  auto fresh = [&](const std::string& name) { return write_case_dir(root / name, s7_case()); };
  {  // truncated
    const auto dir = fresh("truncated");
    const auto size = fs::file_size(dir / "u.npy");
    fs::resize_file(dir / "u.npy", size - 5);
    auto r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "reference"});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_NE(r.err.find("u.npy"), std::string::npos) << r.err;
  }
  {  // integer dtype
    const auto dir = fresh("dtype");
    std::string text = read_file(dir / "A.npy");
    const auto at = text.find("<f8");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 3, "<i8");
    std::ofstream(dir / "A.npy", std::ios::binary) << text;
    auto r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "reference"});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_NE(r.err.find("A.npy"), std::string::npos) << r.err;
  }
  {  // a shape that disagrees with the others
    const auto dir = fresh("shape");
    io::write_npy((dir / "bias.npy").string(), Tensor({2, 4, 8}), io::DType::float32);
    auto r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "reference"});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_NE(r.err.find("'bias'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(2, 4, 8)"), std::string::npos) << r.err;
  }
  {  // a tensor the op does not take
    const auto dir = fresh("unknown");
    io::write_npy((dir / "gate.npy").string(), Tensor({2, 3, 9}), io::DType::float32);
    auto r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "reference"});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_NE(r.err.find("'gate'"), std::string::npos) << r.err;
  }
  {  // no case.json
    const auto dir = fresh("nojson");
    fs::remove(dir / "case.json");
    auto r = run_cli({"run", "s7_scan", "--case", dir.string()});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_NE(r.err.find("case.json"), std::string::npos) << r.err;
  }
}

// The exec protocol with scanlab itself (serial backend) as the external implementation.
TEST(CliExec, ProtocolRoundTripAndTimingJson) {
  const fs::path root = scratch_dir("exec");
  const auto dir = write_case_dir(root / "case", s7_case());
  const std::string exe = self_exe();
  const std::string good = write_script(root, "good.sh", "exec '" + exe + "' run s7_scan --backend serial --case \"$1\" --out \"$2\" >/dev/null");
  auto r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "exec:" + good});
  ASSERT_EQ(r.code, 0) << describe(r);
  r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "serial"});
  ASSERT_EQ(r.code, 0) << describe(r);
  const TensorMap via_exec = io::read_tensors((dir / "out-exec").string());
  const TensorMap direct = io::read_tensors((dir / "out-serial").string());
  ASSERT_EQ(via_exec.size(), direct.size());
  for (const auto& [name, t] : direct) {
    ASSERT_TRUE(via_exec.count(name)) << name;
    EXPECT_EQ(via_exec.at(name).values, t.values) << name << " differs through the exec protocol";
  }
  // The command may carry arguments; timing.json reports the implementation's own time.
  const std::string timed = write_script(
      root, "timed.sh", "'" + exe + "' run s7_scan --backend serial --case \"$2\" --out \"$3\" >/dev/null && echo '{\"seconds\": 0.25, \"forward_seconds\": 0.1}' > \"$3/timing.json\"");
  r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "exec:" + timed + " extra-argument"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("reports 0.250000 s in timing.json"), std::string::npos) << r.out;
  const std::string bad_timing = write_script(
      root, "bad_timing.sh", "'" + exe + "' run s7_scan --backend serial --case \"$1\" --out \"$2\" >/dev/null && echo '{\"secs\": 1}' > \"$2/timing.json\"");
  r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "exec:" + bad_timing});
  EXPECT_NE(r.code, 0) << describe(r);
  EXPECT_NE(r.err.find("timing.json"), std::string::npos) << r.err;
}

TEST(CliExec, FailuresNameTheCommandTheFileAndTheReason) {
  const fs::path root = scratch_dir("exec-fail");
  const auto dir = write_case_dir(root / "case", s7_case());
  const std::string exe = self_exe();
  const std::string crash = write_script(root, "crash.sh", "echo 'boom: something broke' >&2; exit 3");
  auto r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "exec:" + crash});
  EXPECT_EQ(r.code, 1) << describe(r);
  EXPECT_NE(r.err.find("exited with status 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("boom: something broke"), std::string::npos) << r.err;

  const std::string lazy = write_script(
      root, "lazy.sh", "'" + exe + "' run s7_scan --backend serial --case \"$1\" --out \"$2\" >/dev/null && rm \"$2/dB.npy\"");
  r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "exec:" + lazy});
  EXPECT_EQ(r.code, 1) << describe(r);
  EXPECT_NE(r.err.find("did not write output 'dB' (dB.npy, shape (2, 4, 3, 9))"), std::string::npos) << r.err;

  const std::string wrong_shape = write_script(
      root, "shape.sh", "'" + exe + "' run s7_scan --backend serial --case \"$1\" --out \"$2\" >/dev/null && cp \"$2/dA.npy\" \"$2/du.npy\"");
  r = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "exec:" + wrong_shape});
  EXPECT_EQ(r.code, 1) << describe(r);
  EXPECT_NE(r.err.find("du.npy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected (2, 3, 9)"), std::string::npos) << r.err;
}

// A wrong external implementation (its `out` is a copy of `u`) is caught by check, shrunk to the
// smallest case, saved, replayed as a failure, and the printed RC_PARAMS line repeats it.
TEST(CliExec, CheckCatchesShrinksAndSavesAWrongImplementation) {
  const fs::path root = scratch_dir("exec-wrong");
  const std::string exe = self_exe();
  const std::string wrong = write_script(
      root, "wrong.sh", "'" + exe + "' run s7_scan --backend serial --case \"$1\" --out \"$2\" >/dev/null && cp \"$1/u.npy\" \"$2/out.npy\"");
  const std::string failures = (root / "failures").string();
  auto r = run_cli({"check", "s7_scan", "--cases", "20", "--seed", "5", "--backend", "exec:" + wrong},
                   {"SCANLAB_FAILURE_DIR=" + failures});
  ASSERT_EQ(r.code, 1) << describe(r);
  EXPECT_NE(r.out.find("failures: 1"), std::string::npos) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("saved: (\\S+)"))) << r.out;
  const std::string saved = m[1];
  ASSERT_TRUE(fs::exists(fs::path(saved) / "case.json")) << saved;
  const auto c = io::read_case(saved);
  const auto p = S7ScanProblem::from_case(c.tensors, c.options);
  // Shrunk: out = u can only be right by accident, so the minimal case has every size 1.
  EXPECT_EQ(p.batch, 1);
  EXPECT_EQ(p.dim, 1);
  EXPECT_EQ(p.dstate, 1);
  EXPECT_EQ(p.seqlen, 1);
  EXPECT_EQ(c.options.value("seed", std::uint64_t{0}), 5u);
  EXPECT_NE(c.options.value("note", std::string()).find("reproduce: RC_PARAMS="), std::string::npos);
  EXPECT_TRUE(fs::exists(fs::path(saved) / "out-exec" / "out.npy"));
  auto replay = run_cli({"replay", saved, "--backend", "exec:" + wrong});
  EXPECT_EQ(replay.code, 1) << describe(replay);
  EXPECT_NE(replay.out.find("FAIL"), std::string::npos) << replay.out;
  replay = run_cli({"replay", saved, "--backend", "reference"});
  EXPECT_EQ(replay.code, 0) << describe(replay);
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("RC_PARAMS=\"(reproduce=[^\"]+)\""))) << r.out;
  auto again = run_cli({"check", "s7_scan", "--seed", "5", "--backend", "exec:" + wrong},
                       {"SCANLAB_FAILURE_DIR=" + failures, "RC_PARAMS=" + std::string(m[1])});
  EXPECT_EQ(again.code, 1) << describe(again);
  EXPECT_NE(again.out.find("FAILED after 0 passing cases"), std::string::npos) << again.out;
}

// Exit status 3 (the implementation has no equivalent of the case) skips the case in check and is
// counted; run reports it as an error. Here the implementation lacks an initial state.
TEST(CliExec, CheckSkipsCasesTheImplementationDeclines) {
  const fs::path root = scratch_dir("exec-declines");
  const std::string exe = self_exe();
  const std::string partial = write_script(
      root, "partial.sh",
      "[ -f \"$1/initial_state.npy\" ] && { echo 'no initial_state' >&2; exit 3; }\n"
      "exec '" + exe + "' run s7_scan --backend serial --case \"$1\" --out \"$2\" >/dev/null");
  auto r = run_cli({"check", "s7_scan", "--cases", "30", "--seed", "9", "--backend", "exec:" + partial},
                   {"SCANLAB_FAILURE_DIR=" + (root / "failures").string()});
  ASSERT_EQ(r.code, 0) << describe(r);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("(\\d+) generated cases were skipped: the exec implementation has no "
                                                     "equivalent \\(exit status 3\\)")))
      << r.out;
  EXPECT_GT(std::stoi(m[1]), 0) << r.out;
  EXPECT_EQ(r.out.find("option:initial_state"), std::string::npos) << "a declined case was counted as run:\n" << r.out;
  // Any other verb: an error that says why.
  const auto dir = write_case_dir(root / "case", s7_case());  // it has an initial state
  auto run = run_cli({"run", "s7_scan", "--case", dir.string(), "--backend", "exec:" + partial});
  EXPECT_NE(run.code, 0) << describe(run);
  EXPECT_NE(run.err.find("no equivalent of this case"), std::string::npos) << run.err;
}

TEST(CliCheck, PassesOnEveryCompiledBackendWithASummary) {
  for (auto kind : compiled_kokkos_backends()) {
    auto r = run_cli({"check", "selective_scan", "--cases", "25", "--seed", "11", "--backend", to_string(kind)});
    ASSERT_EQ(r.code, 0) << describe(r);
    for (const char* text : {"25 cases on", "PASS", "options mix:", "value regimes:", "variants and configs:",
                             "max err/bound", "failures: 0", "out ", "last_state"})
      EXPECT_NE(r.out.find(text), std::string::npos) << "summary lacks '" << text << "':\n" << r.out;
    EXPECT_NE(r.err.find("25/25 cases"), std::string::npos) << "no final progress line:\n" << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("backward: (\\d+) \\(\\d+%\\) of the cases"))) << r.out;
    EXPECT_GT(std::stoi(m[1]), 0) << r.out;
    EXPECT_EQ(r.out.find("no passing case ran the backward"), std::string::npos) << r.out;
  }
  auto r = run_cli({"check", "s7_scan", "--cases", "10", "--seed", "2", "--backend", "serial", "--impl", "auto"});
  EXPECT_EQ(r.code, 0) << describe(r);
  r = run_cli({"check", "s7_scan", "--cases", "10", "--seed", "2", "--backend", "reference"});
  EXPECT_EQ(r.code, 0) << describe(r);
}

// --config lays fields over each case's config: the summary and the reproduce identity name it,
// and a patch the --impl config cannot take gives up naming the config's own reason.
TEST(CliCheck, ConfigPatchIsLaidOverEachCase) {
  auto r = run_cli({"check", "selective_scan", "--cases", "10", "--seed", "4", "--backend", "serial", "--impl", "tiled",
                    "--config", "{\"fast_activations\":1}"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("impl tiled, config {\"fast_activations\":1}"), std::string::npos) << r.out;
  r = run_cli({"check", "selective_scan", "--cases", "5", "--seed", "4", "--backend", "serial", "--impl", "sequential",
               "--config", "{\"fast_activations\":1}"});
  EXPECT_EQ(r.code, 1) << describe(r);
  EXPECT_NE(r.out.find("it must be 0 for sequential"), std::string::npos) << r.out;
}

// A fixed config that no case with a backward can run (here teams of 32 threads, more than a host
// backend runs) still passes on the forward, but the summary says the gradients went unchecked
// and why the cases were skipped.
TEST(CliCheck, SaysWhenNoCaseRanTheBackward) {
  auto r = run_cli({"check", "selective_scan", "--cases", "12", "--seed", "6", "--backend", "serial", "--impl", "tiled",
                    "--config", "{\"bwd_channels_per_team\":32,\"bwd_team_size\":32}"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("backward: 0 (0%) of the cases"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warning: no passing case ran the backward"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the most frequent reasons (a case can have several):\n  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x bwd_team_size 32 exceeds serial's limit of "), std::string::npos) << "the reason, counted:\n" << r.out;
}

// A crash inside a case (here a segmentation fault injected before the third case runs) leaves
// that case on disk, named on stderr, and the saved case replays; a check that ends normally
// leaves nothing behind.
TEST(CliCheck, ACrashLeavesTheCaseItWasRunning) {
  const fs::path root = scratch_dir("inflight") / "failures";
  const std::string root_env = "SCANLAB_FAILURE_DIR=" + root.string();
  auto r = run_cli({"check", "selective_scan", "--cases", "10", "--seed", "7", "--backend", "serial"},
                   {root_env, "SCANLAB_FAULT_KILL_RANK=0", "SCANLAB_FAULT_POINT=check_case_3", "SCANLAB_FAULT_SIGNAL=11"});
  ASSERT_EQ(r.code, 128 + SIGSEGV) << describe(r);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("the case it was running is saved: (\\S+)\n"))) << r.err;
  const fs::path dir = m[1].str();
  EXPECT_EQ(dir.parent_path(), root) << r.err;
  ASSERT_TRUE(fs::exists(dir / "case.json")) << r.err;
  EXPECT_TRUE(fs::exists(dir / "config.json")) << "the config it ran with";
  EXPECT_NE(read_file(dir / "case.json").find("case 3 of the run"), std::string::npos) << read_file(dir / "case.json");
  EXPECT_NE(r.err.find("replay: scanlab replay " + dir.string() + " --backend 'serial'"), std::string::npos) << r.err;
  auto replay = run_cli({"replay", dir.string(), "--backend", "serial"});
  EXPECT_EQ(replay.code, 0) << describe(replay);

  fs::remove_all(root);
  r = run_cli({"check", "selective_scan", "--cases", "5", "--seed", "7", "--backend", "serial"}, {root_env});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_FALSE(fs::exists(root)) << "a passing check left its in-flight case (or the folder) behind";
  // A failure root where nothing can be written: a warning, and the check runs and passes.
  std::ofstream(root) << "a file, not a folder\n";
  r = run_cli({"check", "selective_scan", "--cases", "5", "--seed", "7", "--backend", "serial"}, {root_env});
  EXPECT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.err.find("warning: cannot save each case before it runs"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_regular_file(root));
}

TEST(CliCheck, UsageErrorsExitTwo) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"check", "s7_scan", "--cases", "0"},
                                                                 {"check", "s7_scan", "--seed", "abc"},
                                                                 {"check", "s7_scan", "--impl", "fastest"},
                                                                 {"check", "nope"},
                                                                 {"check", "s7_scan", "--max-size", "3"},
                                                                 {"check", "s7_scan", "--config", "[1]"},
                                                                 {"check", "selective_scan", "--config", "{\"tile\":1}"}}) {
    auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args[1] << " " << (args.size() > 2 ? args[2] : "") << "\n" << describe(r);
  }
}

TEST(CliReplay, UsesConfigJsonUnlessImplIsGiven) {
  const fs::path root = scratch_dir("replay");
  const auto c = selective_scan_case();
  const auto dir = write_case_dir(root / "case", c);
  const auto p = SelectiveScanProblem::from_case(c.tensors, c.options);
  // A valid config that is not the heuristic one: the other implementation, a short chunk.
  auto config = OpTraits<SelectiveScanProblem>::heuristic(p, BackendKind::serial);
  config.impl = config.impl == "chunked" ? "sequential" : "chunked";
  config.chunk_len = 3;
  ASSERT_EQ(config.invalid_reason(p, BackendKind::serial), "");
  std::ofstream(dir / "config.json") << config.to_json().dump();
  auto r = run_cli({"replay", dir.string(), "--backend", "serial"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("with config " + config.to_json().dump() + " (config.json)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos);
  for (const char* t : {"out", "last_state", "du", "ddelta", "dA", "dB", "dC", "dD", "dz", "ddelta_bias", "dinitial_state"})
    EXPECT_NE(r.out.find("\n  " + std::string(t) + " "), std::string::npos) << "no row for " << t << ":\n" << r.out;

  r = run_cli({"replay", dir.string(), "--backend", "serial", "--impl", "sequential"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("\"impl\":\"sequential\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("(config.json)"), std::string::npos) << r.out;

  auto unrunnable = config.to_json();
  unrunnable["team_size"] = 4096;
  unrunnable["channels_per_team"] = 4096;
  std::ofstream(dir / "config.json") << unrunnable.dump();
  r = run_cli({"replay", dir.string(), "--backend", "serial"});
  EXPECT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("cannot run on serial"), std::string::npos) << r.out;

  std::ofstream(dir / "config.json") << "{not json";
  r = run_cli({"replay", dir.string(), "--backend", "serial"});
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("config.json"), std::string::npos) << r.err;
}

TEST(CliList, ListsOpsImplementationsBackendsAndConfigFields) {
  auto r = run_cli({"list"});
  ASSERT_EQ(r.code, 0) << describe(r);
  for (const auto& op : cli::op_names()) {
    EXPECT_NE(r.out.find(op), std::string::npos) << op;
    cli::visit_op(op, [&](auto traits) {
      using T = decltype(traits);
      for (const auto& impl : T::implementations()) EXPECT_NE(r.out.find(impl), std::string::npos) << impl;
      for (const auto& entry : T::config_fields()) {
        const std::string field = entry.substr(0, entry.find(':'));
        EXPECT_NE(r.out.find("    " + field + " "), std::string::npos) << op << " field " << field << "\n" << r.out;
      }
      return 0;
    });
  }
  for (auto kind : compiled_kokkos_backends()) EXPECT_NE(r.out.find(to_string(kind)), std::string::npos);
  EXPECT_NE(r.out.find("reference"), std::string::npos);
  EXPECT_NE(r.out.find("exec:CMD"), std::string::npos);
}

TEST(CliHelp, EveryVerbDocumentsTheFlagsOfTheDesignTable) {
  const std::map<std::string, std::vector<std::string>> flags{
      {"run", {"OP", "--case", "--backend", "--impl", "--out"}},
      {"check", {"OP", "--cases", "--seed", "--backend", "--impl", "--config", "--max-size"}},
      {"replay", {"DIR", "--backend", "--impl"}},
      {"list", {}}};
  for (const auto& [verb, expected] : flags) {
    auto r = run_cli({verb, "--help"});
    EXPECT_EQ(r.code, 0) << verb << "\n" << describe(r);
    for (const auto& flag : expected) EXPECT_NE(r.out.find(flag), std::string::npos) << verb << " --help lacks " << flag;
  }
  auto r = run_cli({"--help"});
  for (const char* verb : {"run", "check", "replay", "list"}) EXPECT_NE(r.out.find(std::string("  ") + verb), std::string::npos);
}

}  // namespace
}  // namespace scanlab::cli_test
