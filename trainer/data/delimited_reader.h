// Delimited text files with a header line (CSV with RFC 4180 quoting, or TSV), plain or gzip,
// read record by record, and the side tables of a schema's joins. A column is found by its
// header name; a RecBole atomic file's typed header ("user_id:token") is found by the part
// before the colon too. Columns missing from the file are looked up in the joins, through their
// key column. Thread-compatible.
#ifndef DISTTRAIN_TRAINER_DATA_DELIMITED_READER_H_
#define DISTTRAIN_TRAINER_DATA_DELIMITED_READER_H_

#include <zlib.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/data/example.h"
#include "trainer/data/schema.h"

namespace disttrain::trainer {

// Splits one line at `delimiter` into `fields`; with ',' a field may be double-quoted (a quote
// inside doubled), its text then unescaped into `scratch`. InvalidArgument for an unclosed quote.
absl::Status SplitDelimited(absl::string_view line, char delimiter,
                            std::deque<std::string>* scratch,
                            std::vector<absl::string_view>* fields);

// The header's columns: name -> index, the typed RecBole names under their short name too.
std::map<std::string, int> HeaderColumns(const std::vector<absl::string_view>& header);

// A join's rows, by the value of its key column.
class SideTable {
 public:
  static absl::StatusOr<std::shared_ptr<const SideTable>> Load(const JoinSpec& join,
                                                               char delimiter);
  const std::string& key() const { return key_; }
  // The index of `column`, or -1.
  int column(const std::string& name) const;
  // The row whose key is `value`, or null.
  const std::vector<std::string>* row(absl::string_view value) const;
  const std::string& source() const { return source_; }

 private:
  std::string key_, source_;
  std::map<std::string, int> columns_;
  std::unordered_map<std::string, std::vector<std::string>> rows_;
};

class DelimitedFile : public Record {
 public:
  static absl::StatusOr<std::unique_ptr<DelimitedFile>> Open(
      const std::string& path, char delimiter,
      std::vector<std::shared_ptr<const SideTable>> joins = {});
  ~DelimitedFile() override;

  // Reads the next record: true, or false at the end of the file. A line that cannot be split
  // (an unclosed quote) or has another field count than the header is an InvalidArgument naming
  // the line; the file can still be read on after it.
  absl::StatusOr<bool> Next();
  // The data line of the current record, from 1 (the header is not counted).
  int64_t line() const { return line_; }

  absl::Status Values(const std::string& name, const std::string& separator,
                      std::vector<absl::string_view>* out) const override;
  std::string Where() const override;

 private:
  friend class SideTable;
  DelimitedFile() = default;
  bool ReadLine(std::string* line);

  std::string path_;
  char delimiter_ = ',';
  gzFile file_ = nullptr;
  std::string buffer_;
  size_t buffer_pos_ = 0;
  bool eof_ = false;
  std::string text_;
  std::deque<std::string> scratch_;
  std::vector<absl::string_view> fields_;
  std::map<std::string, int> columns_;
  size_t header_size_ = 0;
  int64_t line_ = 0;
  std::vector<std::shared_ptr<const SideTable>> joins_;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_DATA_DELIMITED_READER_H_
