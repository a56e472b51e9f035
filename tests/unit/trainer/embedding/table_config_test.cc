// Table configs: names parsed both ways, invalid values refused with the table named.
#include "trainer/embedding/table_config.h"

#include "gtest/gtest.h"

namespace disttrain::trainer::embedding {
namespace {

TEST(TableConfigTest, ParsesAndNamesOptimizersAndEvictions) {
  for (const char* name : {"sgd", "adagrad", "ftrl"})
    EXPECT_EQ(RowOptimizerName(*ParseRowOptimizer(name)), name);
  for (const char* name : {"lru", "lfu"}) EXPECT_EQ(EvictionName(*ParseEviction(name)), name);
  EXPECT_EQ(ParseRowOptimizer("adam").status().message(),
            "unknown optimizer \"adam\" (want sgd, adagrad or ftrl)");
  EXPECT_FALSE(ParseEviction("fifo").ok());
  EXPECT_EQ(StatePerValue(RowOptimizerKind::kFtrl), 2);
}

TEST(TableConfigTest, RefusesWhatNoTableCanHave) {
  TableConfig c;
  c.name = "users";
  EXPECT_TRUE(ValidateTableConfig(c).ok());
  struct Case {
    const char* what;
    void (*mutate)(TableConfig*);
    const char* message;
  };
  const Case cases[] = {
      {"dim 0", [](TableConfig* c) { c->dim = 0; }, "table \"users\": dim 0 is not in 1..4096"},
      {"negative rate", [](TableConfig* c) { c->learning_rate = -1; },
       "table \"users\": learning_rate must be positive"},
      {"adagrad from zero", [](TableConfig* c) { c->initial_accumulator = 0; },
       "table \"users\": adagrad needs a positive initial_accumulator"},
      {"negative l1", [](TableConfig* c) { c->l1 = -0.5f; },
       "table \"users\": l1 and l2 must not be negative"},
      {"nan stddev", [](TableConfig* c) { c->init_stddev = NAN; },
       "table \"users\": init_stddev must not be negative"},
      {"no name", [](TableConfig* c) { c->name = ""; }, "a table needs a name"},
  };
  for (const Case& k : cases) {
    TableConfig bad = c;
    k.mutate(&bad);
    EXPECT_EQ(ValidateTableConfig(bad).message(), k.message) << k.what;
  }
}

}  // namespace
}  // namespace disttrain::trainer::embedding
