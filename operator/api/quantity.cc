#include "operator/api/quantity.h"

#include <cctype>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace disttrain::api {
namespace {

using int128 = __int128;

absl::Status NotAQuantity(absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrCat("\"", text, "\" is not a resource quantity"));
}

// Multiplier of a suffix as numerator/denominator.
bool SuffixScale(absl::string_view s, int128* num, int128* den) {
  static constexpr std::pair<absl::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  static constexpr std::pair<absl::string_view, int> kDecimal[] = {
      {"m", -3}, {"", 0}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18}};
  *num = 1;
  *den = 1;
  for (auto [name, shift] : kBinary) {
    if (s == name) {
      *num = int128{1} << shift;
      return true;
    }
  }
  for (auto [name, exp] : kDecimal) {
    if (s == name) {
      for (int i = 0; i < (exp < 0 ? -exp : exp); ++i) (exp < 0 ? *den : *num) *= 10;
      return true;
    }
  }
  if (s.size() >= 2 && (s[0] == 'e' || s[0] == 'E')) {
    int exp = 0;
    bool neg = false;
    size_t i = 1;
    if (s[i] == '+' || s[i] == '-') neg = s[i++] == '-';
    if (i >= s.size()) return false;
    for (; i < s.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s[i])) || exp > 30) return false;
      exp = exp * 10 + (s[i] - '0');
    }
    for (int k = 0; k < exp; ++k) (neg ? *den : *num) *= 10;
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<int64_t> ParseMilliQuantity(absl::string_view text) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  int128 mantissa = 0;  // digits without the decimal point
  int128 scale = 1;     // 10^(digits after the point)
  bool digits = false, point = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (mantissa > (int128{1} << 100)) return NotAQuantity(text);
      mantissa = mantissa * 10 + (c - '0');
      if (point) scale *= 10;
      digits = true;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!digits) return NotAQuantity(text);
  int128 num, den;
  if (!SuffixScale(text.substr(i), &num, &den)) return NotAQuantity(text);
  // milli = mantissa / scale * num / den * 1000, rounded up.
  int128 top = mantissa * num * 1000;
  int128 bottom = scale * den;
  int128 milli = (top + bottom - 1) / bottom;
  if (milli > std::numeric_limits<int64_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\" is too large"));
  }
  return static_cast<int64_t>(negative ? -milli : milli);
}

std::string FormatMilliQuantity(int64_t milli) {
  if (milli % 1000 != 0) return absl::StrCat(milli, "m");
  int64_t v = milli / 1000;
  static constexpr std::pair<int, const char*> kUnits[] = {{40, "Ti"}, {30, "Gi"}, {20, "Mi"}};
  for (auto [shift, unit] : kUnits) {
    int64_t base = int64_t{1} << shift;
    if (v != 0 && v % base == 0) return absl::StrCat(v / base, unit);
  }
  return absl::StrCat(v);
}

}  // namespace disttrain::api
