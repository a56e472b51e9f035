// The chief's in-memory copy of the servers (ps_copy.h), with a pull function in place of the
// servers: what it keeps, what a failed pull leaves, and how it paces its pulls.
#include "trainer/worker/ps_copy.h"

#include <atomic>
#include <map>
#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

// Polls `done` for up to 10 s.
template <typename F>
bool Eventually(F done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

TEST(PsCopyTest, KeepsTheNewestPullAndItsStepAndTime) {
  FakeClock clock;
  std::atomic<int64_t> step = 0;
  PsCopy copy(
      [&](Params* p) -> absl::StatusOr<int64_t> {
        const int64_t s = ++step;
        *p = {{static_cast<float>(s), 2.0f * s}};
        return s;
      },
      absl::Milliseconds(1), &clock);
  EXPECT_FALSE(copy.Latest().has_value()) << "nothing before Start";
  copy.Start();
  copy.Start();  // a second call does nothing
  ASSERT_TRUE(Eventually([&] { return copy.copies() >= 3; }));
  std::optional<PsCopy::Copy> c = copy.Latest();
  ASSERT_TRUE(c.has_value());
  EXPECT_GE(c->global_step, 3);
  ASSERT_EQ(c->params.size(), 1u);
  EXPECT_EQ(c->params[0], (std::vector<float>{static_cast<float>(c->global_step),
                                              2.0f * static_cast<float>(c->global_step)}))
      << "the values and the step of one pull";
  EXPECT_EQ(c->taken, clock.Now());
}

TEST(PsCopyTest, AFailedPullKeepsTheLastGoodCopy) {
  std::atomic<int> calls = 0;
  PsCopy copy(
      [&](Params* p) -> absl::StatusOr<int64_t> {
        if (++calls > 1) return absl::UnavailableError("ps-1 is gone");
        *p = {{7.0f}};
        return 7;
      },
      absl::Milliseconds(1));
  copy.Start();
  ASSERT_TRUE(Eventually([&] { return copy.failures() >= 3; }));
  std::optional<PsCopy::Copy> c = copy.Latest();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->global_step, 7);
  EXPECT_EQ(c->params, (Params{{7.0f}}));
  EXPECT_EQ(copy.copies(), 1);
}

TEST(PsCopyTest, ASlowPullSpacesTheNextToTenTimesItsDuration) {
  // Each pull takes 30 ms (on the injected clock) against an interval of 1 ms: the next starts
  // 300 ms after the last one started, so in 0.5 s there are at most 2 or 3, not hundreds.
  FakeClock clock;
  std::atomic<int> calls = 0;
  PsCopy copy(
      [&](Params* p) -> absl::StatusOr<int64_t> {
        clock.Advance(absl::Milliseconds(30));
        *p = {{1.0f}};
        return ++calls;
      },
      absl::Milliseconds(1), &clock);
  copy.Start();
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_GE(calls.load(), 1);
  EXPECT_LE(calls.load(), 3);
}

v1::RowBlock Rows(const std::string& table, uint64_t id, float value) {
  v1::RowBlock b;
  b.set_table(table);
  b.set_row_floats(1);
  b.add_ids(id);
  b.mutable_rows()->append(reinterpret_cast<const char*>(&value), sizeof(float));
  return b;
}

// {id: value} of the copy's table `table`.
std::map<uint64_t, float> TableRows(const PsCopy& copy, const std::string& table) {
  std::map<uint64_t, float> out;
  EXPECT_TRUE(copy.ReadTables([&](const std::string& name, uint32_t, absl::Span<const uint64_t> ids,
                                  absl::Span<const float> rows) {
                    if (name == table)
                      for (size_t i = 0; i < ids.size(); ++i) out[ids[i]] = rows[i];
                    return absl::OkStatus();
                  })
                  .ok());
  return out;
}

TEST(PsCopyTest, KeepsTheRowsOfEveryExportRoundAfterTheDenseVariables) {
  // Round n exports row n (a delta: only the row changed since the last round) and rewrites
  // row 0, as a server's ExportRows since the last version does.
  std::atomic<int> rounds = 0;
  PsCopy copy(
      [](Params* p) -> absl::StatusOr<int64_t> {
        *p = {{1.0f}};
        return 5;
      },
      absl::Milliseconds(1), RealClock::Get(),
      [&](PsCopy::RowSink sink) -> absl::Status {
        const int n = ++rounds;
        if (absl::Status s = sink(Rows("user", 0, static_cast<float>(n))); !s.ok()) return s;
        return sink(Rows("user", static_cast<uint64_t>(n), 10.0f * n));
      });
  copy.Start();
  ASSERT_TRUE(Eventually([&] { return copy.copies() >= 3; }));
  std::optional<PsCopy::Copy> c = copy.Latest();
  ASSERT_TRUE(c.has_value());
  EXPECT_GE(c->table_rows, 4u) << "row 0 and one row per round";
  std::map<uint64_t, float> rows = TableRows(copy, "user");
  EXPECT_EQ(rows[1], 10.0f) << "a row no later round exported is kept";
  EXPECT_EQ(rows[2], 20.0f);
  EXPECT_GE(rows[0], 3.0f) << "a row exported again holds its newest value";
}

TEST(PsCopyTest, WithTablesNoCopyIsOfferedBeforeAnExportRoundSucceeded) {
  // The dense pulls succeed, the exports fail until `ready`: a copy without the rows would
  // restore the servers with empty tables, so Latest() offers none until then; and a failed
  // export afterwards keeps the rows merged before it.
  std::atomic<bool> ready = false;
  std::atomic<int> succeeded = 0;
  PsCopy copy(
      [](Params* p) -> absl::StatusOr<int64_t> {
        *p = {{1.0f}};
        return 5;
      },
      absl::Milliseconds(1), RealClock::Get(),
      [&](PsCopy::RowSink sink) -> absl::Status {
        if (!ready) return absl::UnavailableError("ps 1 is not ready");
        if (absl::Status s = sink(Rows("item", 1, 1.0f)); !s.ok()) return s;
        if (++succeeded > 1) {
          absl::Status s = sink(Rows("item", 2, 2.0f));  // merged, then the round fails
          return s.ok() ? absl::UnavailableError("ps 1 went away mid-export") : s;
        }
        return absl::OkStatus();
      });
  copy.Start();
  ASSERT_TRUE(Eventually([&] { return copy.failures() >= 3; }));
  EXPECT_FALSE(copy.Latest().has_value());
  ready = true;
  ASSERT_TRUE(Eventually([&] { return copy.failures() >= 6; }));
  std::optional<PsCopy::Copy> c = copy.Latest();
  ASSERT_TRUE(c.has_value()) << "a round exported every table";
  EXPECT_EQ(c->global_step, 5);
  EXPECT_EQ(copy.copies(), 1);
  EXPECT_EQ(TableRows(copy, "item"), (std::map<uint64_t, float>{{1, 1.0f}, {2, 2.0f}}));
}

TEST(PsCopyTest, NoExportWhileTheDensePullFails) {
  std::atomic<int> exports = 0;
  PsCopy copy([](Params*) -> absl::StatusOr<int64_t> { return absl::UnavailableError("gone"); },
              absl::Milliseconds(1), RealClock::Get(),
              [&](PsCopy::RowSink) -> absl::Status {
                ++exports;
                return absl::OkStatus();
              });
  copy.Start();
  ASSERT_TRUE(Eventually([&] { return copy.failures() >= 3; }));
  EXPECT_EQ(exports.load(), 0);
  EXPECT_FALSE(copy.Latest().has_value());
}

TEST(PsCopyTest, StopsPromptlyWhenDestroyedMidWait) {
  auto copy = std::make_unique<PsCopy>(
      [](Params* p) -> absl::StatusOr<int64_t> {
        *p = {};
        return 1;
      },
      absl::Hours(1));
  copy->Start();
  ASSERT_TRUE(Eventually([&] { return copy->copies() == 1; }));
  const absl::Time start = absl::Now();
  copy.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << "the hour's wait is cut short";
}

}  // namespace
}  // namespace disttrain::trainer
