#include "trainer/data/delimited_reader.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace disttrain::trainer {

absl::Status SplitDelimited(absl::string_view line, char delimiter,
                            std::deque<std::string>* scratch,
                            std::vector<absl::string_view>* fields) {
  fields->clear();
  size_t i = 0;
  while (true) {
    if (delimiter == ',' && i < line.size() && line[i] == '"') {
      std::string& text = scratch->emplace_back();
      size_t j = i + 1;
      while (true) {
        if (j >= line.size()) return absl::InvalidArgumentError("an unclosed quote");
        if (line[j] == '"') {
          if (j + 1 < line.size() && line[j + 1] == '"') {
            text += '"';
            j += 2;
            continue;
          }
          break;
        }
        text += line[j++];
      }
      fields->push_back(text);
      i = j + 1;
      if (i < line.size() && line[i] != delimiter)
        return absl::InvalidArgumentError("text after a closing quote");
    } else {
      const size_t end = line.find(delimiter, i);
      fields->push_back(
          line.substr(i, end == absl::string_view::npos ? absl::string_view::npos : end - i));
      if (end == absl::string_view::npos) break;
      i = end;
    }
    if (i >= line.size()) break;
    ++i;  // past the delimiter
    if (i == line.size()) {
      fields->push_back(absl::string_view());
      break;
    }
  }
  return absl::OkStatus();
}

std::map<std::string, int> HeaderColumns(const std::vector<absl::string_view>& header) {
  std::map<std::string, int> columns;
  for (size_t i = 0; i < header.size(); ++i)
    columns.emplace(std::string(header[i]), static_cast<int>(i));
  for (size_t i = 0; i < header.size(); ++i) {
    const size_t colon = header[i].find(':');
    if (colon != absl::string_view::npos)
      columns.emplace(std::string(header[i].substr(0, colon)), static_cast<int>(i));
  }
  return columns;
}

absl::StatusOr<std::shared_ptr<const SideTable>> SideTable::Load(const JoinSpec& join,
                                                                 char delimiter) {
  auto t = std::shared_ptr<SideTable>(new SideTable());
  t->key_ = join.key;
  t->source_ = absl::StrJoin(join.files, ", ");
  for (const std::string& path : join.files) {
    absl::StatusOr<std::unique_ptr<DelimitedFile>> f = DelimitedFile::Open(path, delimiter);
    if (!f.ok()) return f.status();
    std::vector<absl::string_view> key;
    while (true) {
      absl::StatusOr<bool> more = (*f)->Next();
      if (!more.ok()) return more.status();
      if (!*more) break;
      if (t->columns_.empty()) {
        // The first file's header names the columns; each later file must have the same.
        for (const auto& [name, i] : (*f)->columns_) t->columns_[name] = i;
        if (!t->columns_.count(join.key))
          return absl::InvalidArgumentError(absl::StrCat(path, ": the join's key column \"",
                                                         join.key, "\" is not in the header"));
      }
      if (absl::Status s = (*f)->Values(join.key, "\x1f", &key); !s.ok()) return s;
      std::vector<std::string> row((*f)->fields_.begin(), (*f)->fields_.end());
      t->rows_[key.empty() ? std::string() : std::string(key[0])] = std::move(row);
    }
  }
  return std::shared_ptr<const SideTable>(std::move(t));
}

int SideTable::column(const std::string& name) const {
  auto it = columns_.find(name);
  return it == columns_.end() ? -1 : it->second;
}

const std::vector<std::string>* SideTable::row(absl::string_view value) const {
  auto it = rows_.find(std::string(value));
  return it == rows_.end() ? nullptr : &it->second;
}

absl::StatusOr<std::unique_ptr<DelimitedFile>> DelimitedFile::Open(
    const std::string& path, char delimiter, std::vector<std::shared_ptr<const SideTable>> joins) {
  std::unique_ptr<DelimitedFile> f(new DelimitedFile());
  f->path_ = path;
  f->delimiter_ = delimiter;
  f->joins_ = std::move(joins);
  f->file_ = gzopen(path.c_str(), "rb");
  if (f->file_ == nullptr) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  gzbuffer(f->file_, 1 << 20);
  std::string header;
  if (!f->ReadLine(&header))
    return absl::InvalidArgumentError(absl::StrCat(path, ": no header line"));
  std::vector<absl::string_view> names;
  if (absl::Status s = SplitDelimited(header, delimiter, &f->scratch_, &names); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat(path, ": header: ", s.message()));
  f->columns_ = HeaderColumns(names);
  f->header_size_ = names.size();
  f->scratch_.clear();
  for (const auto& j : f->joins_) {
    if (!f->columns_.count(j->key()))
      return absl::InvalidArgumentError(absl::StrCat(path, ": the join key \"", j->key(), "\" of ",
                                                     j->source(), " is not a column here"));
  }
  return f;
}

DelimitedFile::~DelimitedFile() {
  if (file_ != nullptr) gzclose(file_);
}

bool DelimitedFile::ReadLine(std::string* line) {
  line->clear();
  while (true) {
    const size_t nl = buffer_.find('\n', buffer_pos_);
    if (nl != std::string::npos) {
      line->append(buffer_, buffer_pos_, nl - buffer_pos_);
      buffer_pos_ = nl + 1;
      break;
    }
    line->append(buffer_, buffer_pos_, std::string::npos);
    buffer_.clear();
    buffer_pos_ = 0;
    if (eof_) {
      if (line->empty()) return false;
      break;
    }
    char chunk[1 << 16];
    const int n = gzread(file_, chunk, sizeof(chunk));
    if (n <= 0) {
      eof_ = true;
    } else {
      buffer_.assign(chunk, static_cast<size_t>(n));
    }
  }
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

absl::StatusOr<bool> DelimitedFile::Next() {
  do {
    if (!ReadLine(&text_)) return false;
    ++line_;
  } while (text_.empty());  // blank lines (a trailing newline) are not records
  scratch_.clear();
  if (absl::Status s = SplitDelimited(text_, delimiter_, &scratch_, &fields_); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat(Where(), ": ", s.message()));
  if (fields_.size() != header_size_)
    return absl::InvalidArgumentError(
        absl::StrCat(Where(), ": ", fields_.size(), " fields where the header has ", header_size_));
  return true;
}

namespace {

void SplitValues(absl::string_view field, const std::string& separator,
                 std::vector<absl::string_view>* out) {
  out->clear();
  if (field.empty()) return;
  if (separator.size() == 1 && separator[0] == '\x1f') {
    out->push_back(field);
    return;
  }
  for (absl::string_view v : absl::StrSplit(field, separator)) out->push_back(v);
}

}  // namespace

absl::Status DelimitedFile::Values(const std::string& name, const std::string& separator,
                                   std::vector<absl::string_view>* out) const {
  auto it = columns_.find(name);
  if (it != columns_.end()) {
    SplitValues(fields_[it->second], separator, out);
    return absl::OkStatus();
  }
  for (const auto& j : joins_) {
    const int c = j->column(name);
    if (c < 0) continue;
    absl::string_view key = fields_[columns_.at(j->key())];
    const std::vector<std::string>* row = j->row(key);
    if (row == nullptr)
      return absl::NotFoundError(
          absl::StrCat(j->key(), " \"", key, "\" has no row in ", j->source()));
    SplitValues((*row)[c], separator, out);
    return absl::OkStatus();
  }
  return absl::NotFoundError("no such column in the file or its joins");
}

std::string DelimitedFile::Where() const { return absl::StrCat(path_, ":line ", line_ + 1); }

}  // namespace disttrain::trainer
