#include "operator/kube/internal/rest_streams.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "operator/kube/errors.h"
#include "operator/kube/protobuf.h"

namespace disttrain::kube {

using nlohmann::json;

bool BodyReader::Fill() {
  concurrency::streams::streambuf<uint8_t> source = body_.streambuf();
  const size_t want = std::clamp<size_t>(source.in_avail(), 1, 1 << 16);
  const size_t old = buffer_.size();
  buffer_.resize(old + want);
  const size_t got = source.getn(reinterpret_cast<uint8_t*>(&buffer_[old]), want).get();
  buffer_.resize(old + got);
  return got > 0;
}

// Drops what was consumed: all of it when nothing is left (the buffer is reused from its
// start), else once the consumed part is large and more than half the buffer.
void BodyReader::Compact() {
  if (start_ == buffer_.size()) {
    buffer_.clear();
    scanned_ = start_ = 0;
  } else if (start_ > (1 << 16) && start_ * 2 > buffer_.size()) {
    buffer_.erase(0, start_);
    scanned_ -= std::min(scanned_, start_);
    start_ = 0;
  }
}

bool BodyReader::NextLine(std::string* line) {
  while (true) {
    const size_t newline = buffer_.find('\n', std::max(scanned_, start_));
    if (newline != std::string::npos) {
      line->assign(buffer_, start_, newline - start_);
      start_ = scanned_ = newline + 1;
      Compact();
      return true;
    }
    Compact();
    scanned_ = buffer_.size();
    if (!Fill()) {
      if (available() == 0) return false;
      line->assign(buffer_, start_, std::string::npos);
      start_ = buffer_.size();
      Compact();
      return true;
    }
  }
}

bool BodyReader::NextFrame(std::string* frame) {
  while (available() < 4) {
    if (!Fill()) {
      if (available() == 0) return false;
      throw std::runtime_error("stream ended inside a frame's length");
    }
  }
  const auto* p = reinterpret_cast<const uint8_t*>(buffer_.data() + start_);
  const size_t length = (size_t{p[0]} << 24) | (size_t{p[1]} << 16) | (size_t{p[2]} << 8) | p[3];
  while (available() < 4 + length) {
    if (!Fill()) throw std::runtime_error("stream ended inside a frame");
  }
  frame->assign(buffer_, start_ + 4, length);
  start_ += 4 + length;
  Compact();
  return true;
}

RestLineStream::RestLineStream(std::shared_ptr<web::http::client::http_client> client,
                               pplx::cancellation_token_source cts,
                               web::http::http_response response)
    : client_(std::move(client)),
      cts_(std::move(cts)),
      response_(std::move(response)),
      reader_(response_.body()) {}

template <typename Read>
bool RestLineStream::Guarded(Read read) {
  if (cancelled_) {
    status_ = absl::CancelledError("stream cancelled");
    return false;
  }
  try {
    if (read()) return true;
    status_ = absl::OkStatus();
  } catch (const std::exception& e) {
    status_ = cancelled_ ? absl::CancelledError("stream cancelled")
                         : absl::UnavailableError(absl::StrCat("stream: ", e.what()));
  }
  return false;
}

bool RestLineStream::Next(std::string* line) {
  return Guarded([&] { return reader_.NextLine(line); });
}

bool RestLineStream::NextFrame(std::string* frame) {
  return Guarded([&] { return reader_.NextFrame(frame); });
}

WatchEvent::Type WatchEventType(const std::string& type) {
  if (type == "ADDED") return WatchEvent::Type::kAdded;
  if (type == "MODIFIED") return WatchEvent::Type::kModified;
  if (type == "DELETED") return WatchEvent::Type::kDeleted;
  if (type == "BOOKMARK") return WatchEvent::Type::kBookmark;
  return WatchEvent::Type::kError;
}

namespace {

// The stream's end: its own error, or the line stream's status named as a watch's.
absl::Status WatchEnd(const absl::Status& s) {
  return s.ok() ? s : absl::Status(s.code(), absl::StrCat("watch ", s.message()));
}

// The Status an ERROR event carries (410 Gone after compaction, ...).
absl::Status ErrorEvent(const json& status) {
  return StatusFromHttp(status.value("code", 500), status.dump(), "watch");
}

}  // namespace

bool RestWatchStream::Next(WatchEvent* event) {
  std::string line;
  while (lines_->Next(&line)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      status_ = absl::DataLossError("watch stream: a line is not JSON");
      return false;
    }
    event->type = WatchEventType(j.value("type", ""));
    event->object = j.contains("object") ? std::move(j["object"]) : json::object();
    event->decoded = false;
    if (event->type == WatchEvent::Type::kError) {
      status_ = ErrorEvent(event->object);
      return false;
    }
    return true;
  }
  status_ = WatchEnd(lines_->status());
  return false;
}

bool RestProtoWatchStream::Next(WatchEvent* event) {
  std::string frame;
  if (!body_->NextFrame(&frame)) {
    status_ = WatchEnd(body_->status());
    return false;
  }
  absl::StatusOr<ProtoWatchEvent> e = ParseProtoWatchEvent(frame);
  absl::StatusOr<ProtoObject> object =
      e.ok() ? ParseProtoObject(e->object) : absl::StatusOr<ProtoObject>(e.status());
  if (!object.ok()) {
    status_ = absl::DataLossError(absl::StrCat("watch stream: ", object.status().message()));
    return false;
  }
  event->type = WatchEventType(e->type);
  if (event->type == WatchEvent::Type::kError) {
    status_ = ErrorEvent(ProtoStatusToJson(object->raw));
    return false;
  }
  absl::StatusOr<json> decoded = decoder_(object->raw);
  if (!decoded.ok()) {
    status_ = absl::DataLossError(absl::StrCat("watch stream: ", decoded.status().message()));
    return false;
  }
  event->object = *std::move(decoded);
  // As the JSON watch carries them on every object.
  if (!object->api_version.empty()) event->object["apiVersion"] = object->api_version;
  if (!object->kind.empty()) event->object["kind"] = object->kind;
  event->decoded = true;
  return true;
}

}  // namespace disttrain::kube
