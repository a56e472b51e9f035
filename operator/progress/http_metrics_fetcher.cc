#include "operator/progress/http_metrics_fetcher.h"

#include <cpprest/http_client.h>

#include <chrono>
#include <exception>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace disttrain::progress {

void HttpMetricsFetcher::Fetch(const std::string& url,
                               std::function<void(absl::StatusOr<std::string>)> done) {
  std::shared_ptr<web::http::client::http_client> client;
  if (!web::uri::validate(url)) {
    done(absl::InvalidArgumentError(absl::StrCat("metrics URL ", url, " is not a URL")));
    return;
  }
  try {
    web::http::client::http_client_config config;
    config.set_timeout(std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout_)));
    client = std::make_shared<web::http::client::http_client>(web::uri(url), config);
  } catch (const std::exception& e) {
    done(absl::InvalidArgumentError(absl::StrCat("metrics URL ", url, ": ", e.what())));
    return;
  }
  // The client lives until the answer is read: the continuations hold it.
  client->request(web::http::methods::GET)
      .then([client, url](web::http::http_response resp) {
        if (resp.status_code() != web::http::status_codes::OK) {
          throw std::runtime_error(absl::StrCat("HTTP ", resp.status_code()));
        }
        return resp.extract_utf8string(/*ignore_content_type=*/true);
      })
      .then([client, url, done = std::move(done)](pplx::task<std::string> body) {
        try {
          done(body.get());
        } catch (const std::exception& e) {
          done(absl::UnavailableError(absl::StrCat("GET ", url, ": ", e.what())));
        }
      });
}

}  // namespace disttrain::progress
