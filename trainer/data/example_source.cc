#include "trainer/data/example_source.h"

#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "trainer/data/delimited_reader.h"
#include "trainer/data/example_encoder.h"
#include "trainer/data/synthetic_criteo.h"
#include "trainer/data/tfrecord_reader.h"
#include "trainer/embedding/id_hash.h"

namespace disttrain::trainer {
namespace {

// The files of a split, read one after the other, each record once.
class FileSource : public ExampleSource {
 public:
  FileSource(const Schema& schema, const SourceOptions& o,
             std::vector<std::shared_ptr<const SideTable>> joins)
      : schema_(schema), o_(o), encoder_(schema), joins_(std::move(joins)), rng_(o.seed) {
    const bool apart = !schema.test_files.empty();
    files_ = o.test && apart ? schema.test_files : schema.files;
    filter_split_ = !apart && schema.test_fraction > 0;
    shard_files_ = !o.test && static_cast<int>(files_.size()) >= o.parts;
  }

  absl::StatusOr<bool> Next(Example* out) override {
    if (o_.test) return ReadOne(out);
    // Training: a shuffle buffer filled from the stream, refilled as it drains.
    while (buffer_.size() < o_.shuffle_buffer) {
      Example e;
      absl::StatusOr<bool> got = ReadOne(&e);
      if (!got.ok()) return got.status();
      if (!*got) {
        if (pass_examples_ == 0 && buffer_.empty())
          return absl::FailedPreconditionError(
              absl::StrCat("replica ", o_.part, " of ", o_.parts, " has no training example in ",
                           files_.size(), " file(s) (test_fraction ", schema_.test_fraction, ")"));
        pass_examples_ = 0;
        records_ = 0;
        file_ = -1;  // the next pass starts over
        if (!buffer_.empty()) break;
        continue;
      }
      buffer_.push_back(std::move(e));
    }
    std::uniform_int_distribution<size_t> pick(0, buffer_.size() - 1);
    const size_t j = pick(rng_);
    *out = std::move(buffer_[j]);
    buffer_[j] = std::move(buffer_.back());
    buffer_.pop_back();
    return true;
  }

  uint64_t skipped() const override { return skipped_; }

 private:
  // The next record of this split and share, encoded; false at the end of the pass.
  absl::StatusOr<bool> ReadOne(Example* out) {
    while (true) {
      if (delimited_ == nullptr && tfrecord_ == nullptr) {
        if (!OpenNextFile()) return false;
        continue;
      }
      absl::StatusOr<bool> more = delimited_ ? delimited_->Next() : tfrecord_->Next();
      const Record& rec = delimited_ ? static_cast<const Record&>(*delimited_) : *tfrecord_;
      const int64_t n = delimited_ ? delimited_->line() : tfrecord_->record();
      if (more.ok() && !*more) {
        delimited_.reset();
        tfrecord_.reset();
        continue;
      }
      const uint64_t r = records_++;
      if (filter_split_ &&
          InTestSplit(schema_.split_seed, file_, n, schema_.test_fraction) != o_.test)
        continue;
      if (!o_.test && !shard_files_ && r % o_.parts != static_cast<uint64_t>(o_.part)) continue;
      absl::Status s = more.status();
      if (s.ok()) s = encoder_.Encode(rec, out);
      if (s.ok()) {
        ++pass_examples_;
        return true;
      }
      if (!o_.skip_bad_records || (tfrecord_ && !tfrecord_->can_continue())) return s;
      if (++skipped_ <= 5) LogWarning("skipping a bad record", {{"error", s.ToString()}});
    }
  }

  bool OpenNextFile() {
    while (++file_ < static_cast<int>(files_.size())) {
      if (shard_files_ && file_ % o_.parts != o_.part) continue;
      open_error_ = absl::OkStatus();
      if (schema_.format == "tfrecord") {
        absl::StatusOr<std::unique_ptr<TfRecordFile>> f = TfRecordFile::Open(files_[file_]);
        if (f.ok())
          tfrecord_ = *std::move(f);
        else
          open_error_ = f.status();
      } else {
        absl::StatusOr<std::unique_ptr<DelimitedFile>> f =
            DelimitedFile::Open(files_[file_], schema_.delimiter, joins_);
        if (f.ok())
          delimited_ = *std::move(f);
        else
          open_error_ = f.status();
      }
      if (!open_error_.ok()) {
        LogError("cannot read a data file", {{"error", open_error_.ToString()}});
        continue;
      }
      return true;
    }
    return false;
  }

  const Schema& schema_;
  const SourceOptions o_;
  ExampleEncoder encoder_;
  std::vector<std::shared_ptr<const SideTable>> joins_;
  std::vector<std::string> files_;
  bool filter_split_ = false, shard_files_ = false;
  int file_ = -1;
  uint64_t records_ = 0, pass_examples_ = 0, skipped_ = 0;
  std::unique_ptr<DelimitedFile> delimited_;
  std::unique_ptr<TfRecordFile> tfrecord_;
  std::vector<Example> buffer_;
  std::mt19937_64 rng_;
  absl::Status open_error_;
};

class SyntheticSource : public ExampleSource {
 public:
  SyntheticSource(const Schema& s, const SourceOptions& o)
      : seed_(s.split_seed),
        rows_(s.synthetic_rows),
        fraction_(s.test_fraction),
        o_(o),
        next_(o.test ? 0 : static_cast<uint64_t>(o.part)) {}

  absl::StatusOr<bool> Next(Example* out) override {
    const uint64_t stride = o_.test ? 1 : static_cast<uint64_t>(o_.parts);
    for (uint64_t tries = 0; tries < rows_ + 1; ++tries) {
      if (next_ >= rows_) {
        if (o_.test) return false;
        next_ = static_cast<uint64_t>(o_.part);
        if (next_ >= rows_)
          return absl::FailedPreconditionError(
              absl::StrCat("replica ", o_.part, " of ", o_.parts, " has no row of ", rows_));
      }
      const uint64_t r = next_;
      next_ += stride;
      if (InTestSplit(seed_, 0, static_cast<int64_t>(r), fraction_) != o_.test) continue;
      SyntheticCriteoRow(seed_, r, out);
      return true;
    }
    return absl::FailedPreconditionError("no row of this split");
  }
  uint64_t skipped() const override { return 0; }

 private:
  const uint64_t seed_, rows_;
  const double fraction_;
  const SourceOptions o_;
  uint64_t next_;
};

}  // namespace

bool InTestSplit(uint64_t split_seed, int file, int64_t record, double fraction) {
  if (fraction <= 0) return false;
  const uint64_t h = embedding::Mix64(
      embedding::Mix64(split_seed) ^
      embedding::Mix64((static_cast<uint64_t>(file) << 40) ^ static_cast<uint64_t>(record)));
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0) < fraction;
}

absl::StatusOr<std::unique_ptr<ExampleSource>> ExampleSource::Open(const Schema& schema,
                                                                   const SourceOptions& o) {
  if (schema.format == "synthetic-criteo") {
    if (schema.synthetic_rows == 0)
      return absl::InvalidArgumentError("synthetic-criteo: rows must be positive");
    return std::unique_ptr<ExampleSource>(new SyntheticSource(schema, o));
  }
  std::vector<std::shared_ptr<const SideTable>> joins;
  for (const JoinSpec& j : schema.joins) {
    absl::StatusOr<std::shared_ptr<const SideTable>> t = SideTable::Load(j, schema.delimiter);
    if (!t.ok()) return t.status();
    joins.push_back(*std::move(t));
  }
  // Every file must open now: a typo in a path is an error at the start, not a warning later.
  for (const std::string& f :
       (o.test && !schema.test_files.empty()) ? schema.test_files : schema.files) {
    if (schema.format == "tfrecord") {
      if (absl::StatusOr<std::unique_ptr<TfRecordFile>> t = TfRecordFile::Open(f); !t.ok())
        return t.status();
    } else if (absl::StatusOr<std::unique_ptr<DelimitedFile>> d =
                   DelimitedFile::Open(f, schema.delimiter, joins);
               !d.ok()) {
      return d.status();
    }
  }
  return std::unique_ptr<ExampleSource>(new FileSource(schema, o, std::move(joins)));
}

}  // namespace disttrain::trainer
