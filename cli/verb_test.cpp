// `scanlab test [gtest flags]`: the property and unit tests compiled into this binary.
// RapidCheck reads RC_PARAMS (e.g. RC_PARAMS="max_success=500 seed=7").
#include <gtest/gtest.h>

#include "verbs.hpp"

namespace {

int run_tests(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

const bool registered = scanlab::cli::register_verb(
    {"test", "run the property and unit tests built into this binary (gtest flags; RC_PARAMS for RapidCheck)",
     run_tests});

}  // namespace
