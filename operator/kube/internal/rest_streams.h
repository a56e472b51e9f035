// The streaming bodies of RestKubeClient: a GET read line by line (pod logs, JSON watches) and
// a protobuf watch read frame by frame. Each holds its cpprestsdk client and response; Next()
// is called from one thread, Cancel() from any.
#ifndef DISTTRAIN_OPERATOR_KUBE_INTERNAL_REST_STREAMS_H_
#define DISTTRAIN_OPERATOR_KUBE_INTERNAL_REST_STREAMS_H_

#include <cpprest/http_client.h>

#include <atomic>
#include <memory>
#include <string>

#include "operator/kube/kube_client.h"

namespace disttrain::kube {

// A response body read in bulk: each read takes what the connection has buffered (at least one
// byte, at most 64 KiB), where istream::read_line goes through the stream buffer a character
// at a time. Throws what cpprestsdk throws (a cancelled or failed connection).
class BodyReader {
 public:
  explicit BodyReader(concurrency::streams::istream body) : body_(std::move(body)) {}

  // The next line without its newline; false once the body ended (a last line without a
  // newline is still returned).
  bool NextLine(std::string* line);
  // The next frame of a length-prefixed stream (4 bytes big-endian, then the frame); false
  // once the body ended between frames. A body that ends inside a frame throws.
  bool NextFrame(std::string* frame);

 private:
  // Appends what the connection has (at least one byte); false at the end of the body.
  bool Fill();
  void Compact();
  size_t available() const { return buffer_.size() - start_; }

  concurrency::streams::istream body_;
  std::string buffer_;
  size_t start_ = 0;    // the first unconsumed byte
  size_t scanned_ = 0;  // (lines) no newline in [start_, scanned_)
};

// The body of a streaming GET, line by line.
class RestLineStream : public LineStream {
 public:
  RestLineStream(std::shared_ptr<web::http::client::http_client> client,
                 pplx::cancellation_token_source cts, web::http::http_response response);
  ~RestLineStream() override { Cancel(); }

  bool Next(std::string* line) override;
  // The body read as length-prefixed frames instead of lines (a protobuf watch); same status.
  bool NextFrame(std::string* frame);
  void Cancel() override {
    if (!cancelled_.exchange(true)) cts_.cancel();
  }
  absl::Status status() const override { return status_; }

 private:
  // `read` with cpprestsdk's failures turned into the stream's status.
  template <typename Read>
  bool Guarded(Read read);

  std::shared_ptr<web::http::client::http_client> client_;
  pplx::cancellation_token_source cts_;
  web::http::http_response response_;
  BodyReader reader_;
  std::atomic<bool> cancelled_{false};
  absl::Status status_;
};

// A JSON watch: each line an event.
class RestWatchStream : public WatchStream {
 public:
  explicit RestWatchStream(std::unique_ptr<RestLineStream> lines) : lines_(std::move(lines)) {}
  bool Next(WatchEvent* event) override;
  void Cancel() override { lines_->Cancel(); }
  absl::Status status() const override { return status_; }

 private:
  std::unique_ptr<RestLineStream> lines_;
  absl::Status status_;
};

// A protobuf watch: each frame an event whose object `decoder` turns into JSON.
class RestProtoWatchStream : public WatchStream {
 public:
  RestProtoWatchStream(std::unique_ptr<RestLineStream> body, ObjectDecoder decoder)
      : body_(std::move(body)), decoder_(std::move(decoder)) {}
  bool Next(WatchEvent* event) override;
  void Cancel() override { body_->Cancel(); }
  absl::Status status() const override { return status_; }

 private:
  std::unique_ptr<RestLineStream> body_;  // read with NextFrame
  ObjectDecoder decoder_;
  absl::Status status_;
};

// ADDED, MODIFIED, DELETED, BOOKMARK, else ERROR.
WatchEvent::Type WatchEventType(const std::string& type);

}  // namespace disttrain::kube

#endif  // DISTTRAIN_OPERATOR_KUBE_INTERNAL_REST_STREAMS_H_
