#include "common/certificates.h"

#include <arpa/inet.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "absl/strings/str_cat.h"

namespace disttrain {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
  void operator()(ASN1_TIME* p) const { ASN1_TIME_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, Free>;

absl::Status OpenSslError(absl::string_view what) {
  char buf[256] = "unknown error";
  if (unsigned long e = ERR_get_error(); e != 0) ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return absl::InternalError(absl::StrCat(what, ": ", buf));
}

absl::StatusOr<Owned<EVP_PKEY>> NewKey() {
  Owned<EVP_PKEY> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (key == nullptr) return OpenSslError("generating a P-256 key");
  return key;
}

std::string ToPem(EVP_PKEY* key) {
  Owned<BIO> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string ToPem(X509* cert) {
  Owned<BIO> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

absl::StatusOr<Owned<X509>> ParseCertificate(absl::string_view pem) {
  Owned<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Owned<X509> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    ERR_clear_error();
    return absl::InvalidArgumentError("not a PEM certificate");
  }
  return cert;
}

absl::StatusOr<Owned<EVP_PKEY>> ParseKey(absl::string_view pem) {
  Owned<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Owned<EVP_PKEY> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    ERR_clear_error();
    return absl::InvalidArgumentError("not a PEM private key");
  }
  return key;
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (ext == nullptr || X509_add_ext(cert, ext.get(), -1) != 1)
    return OpenSslError(absl::StrCat("adding extension ", OBJ_nid2sn(nid)));
  return absl::OkStatus();
}

absl::Status AddSubjectAltNames(X509* cert, const std::vector<std::string>& names) {
  Owned<GENERAL_NAMES> gens(GENERAL_NAMES_new());
  for (const std::string& name : names) {
    unsigned char ip[16];
    GENERAL_NAME* gen = nullptr;
    if (inet_pton(AF_INET, name.c_str(), ip) == 1 || inet_pton(AF_INET6, name.c_str(), ip) == 1) {
      gen = a2i_GENERAL_NAME(nullptr, nullptr, nullptr, GEN_IPADD, name.c_str(), 0);
    } else {
      gen = a2i_GENERAL_NAME(nullptr, nullptr, nullptr, GEN_DNS, name.c_str(), 0);
    }
    if (gen == nullptr) return OpenSslError(absl::StrCat("subjectAltName \"", name, "\""));
    sk_GENERAL_NAME_push(gens.get(), gen);
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, gens.get(), 0, X509V3_ADD_DEFAULT) != 1)
    return OpenSslError("adding subjectAltName");
  return absl::OkStatus();
}

// A certificate with a random 127-bit serial, the given subject and validity, unsigned.
absl::StatusOr<Owned<X509>> NewCertificate(absl::string_view common_name, absl::Time not_before,
                                           absl::Time not_after, EVP_PKEY* key) {
  Owned<X509> cert(X509_new());
  Owned<BIGNUM> serial(BN_new());
  if (cert == nullptr || serial == nullptr ||
      BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1)
    return OpenSslError("allocating a certificate");
  X509_set_version(cert.get(), 2);  // v3
  BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()));
  Owned<ASN1_TIME> from(ASN1_TIME_set(nullptr, absl::ToTimeT(not_before)));
  Owned<ASN1_TIME> to(ASN1_TIME_set(nullptr, absl::ToTimeT(not_after)));
  if (from == nullptr || to == nullptr || X509_set1_notBefore(cert.get(), from.get()) != 1 ||
      X509_set1_notAfter(cert.get(), to.get()) != 1)
    return OpenSslError("setting the validity");
  X509_NAME* name = X509_get_subject_name(cert.get());
  const std::string cn(common_name);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("disttrain"), -1, -1, 0);
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                 0) != 1)
    return OpenSslError("setting the common name");
  if (X509_set_pubkey(cert.get(), key) != 1) return OpenSslError("setting the public key");
  return cert;
}

}  // namespace

absl::StatusOr<KeyAndCertificate> MakeCertificateAuthority(absl::string_view common_name,
                                                           absl::Time not_before,
                                                           absl::Time not_after) {
  absl::StatusOr<Owned<EVP_PKEY>> key = NewKey();
  if (!key.ok()) return key.status();
  absl::StatusOr<Owned<X509>> cert = NewCertificate(common_name, not_before, not_after, key->get());
  if (!cert.ok()) return cert.status();
  X509* c = cert->get();
  X509_set_issuer_name(c, X509_get_subject_name(c));
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                            std::pair{NID_key_usage, "critical,keyCertSign,cRLSign"},
                            std::pair{NID_subject_key_identifier, "hash"}}) {
    if (absl::Status s = AddExtension(c, c, nid, value); !s.ok()) return s;
  }
  if (X509_sign(c, key->get(), EVP_sha256()) == 0) return OpenSslError("signing the CA");
  return KeyAndCertificate{ToPem(key->get()), ToPem(c)};
}

absl::StatusOr<KeyAndCertificate> IssueCertificate(const KeyAndCertificate& ca,
                                                   const CertificateRequest& request) {
  if (request.names.empty())
    return absl::InvalidArgumentError("a certificate needs at least one subjectAltName");
  absl::StatusOr<Owned<X509>> ca_cert = ParseCertificate(ca.certificate_pem);
  if (!ca_cert.ok()) return ca_cert.status();
  absl::StatusOr<Owned<EVP_PKEY>> ca_key = ParseKey(ca.key_pem);
  if (!ca_key.ok()) return ca_key.status();
  absl::StatusOr<Owned<EVP_PKEY>> key = NewKey();
  if (!key.ok()) return key.status();
  absl::StatusOr<Owned<X509>> cert =
      NewCertificate(request.common_name, request.not_before, request.not_after, key->get());
  if (!cert.ok()) return cert.status();
  X509* c = cert->get();
  X509_set_issuer_name(c, X509_get_subject_name(ca_cert->get()));
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:FALSE"},
                            std::pair{NID_key_usage, "critical,digitalSignature"},
                            std::pair{NID_ext_key_usage, "serverAuth,clientAuth"},
                            std::pair{NID_subject_key_identifier, "hash"},
                            std::pair{NID_authority_key_identifier, "keyid:always"}}) {
    if (absl::Status s = AddExtension(c, ca_cert->get(), nid, value); !s.ok()) return s;
  }
  if (absl::Status s = AddSubjectAltNames(c, request.names); !s.ok()) return s;
  if (X509_sign(c, ca_key->get(), EVP_sha256()) == 0) return OpenSslError("signing");
  return KeyAndCertificate{ToPem(key->get()), ToPem(c)};
}

absl::StatusOr<std::vector<std::string>> SubjectAltNames(absl::string_view certificate_pem) {
  absl::StatusOr<Owned<X509>> cert = ParseCertificate(certificate_pem);
  if (!cert.ok()) return cert.status();
  Owned<GENERAL_NAMES> gens(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert->get(), NID_subject_alt_name, nullptr, nullptr)));
  std::vector<std::string> out;
  for (int i = 0; gens != nullptr && i < sk_GENERAL_NAME_num(gens.get()); ++i) {
    const GENERAL_NAME* gen = sk_GENERAL_NAME_value(gens.get(), i);
    if (gen->type == GEN_DNS) {
      const ASN1_IA5STRING* s = gen->d.dNSName;
      out.push_back(
          absl::StrCat("DNS:", std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                           static_cast<size_t>(ASN1_STRING_length(s)))));
    } else if (gen->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* s = gen->d.iPAddress;
      char text[INET6_ADDRSTRLEN] = "";
      inet_ntop(ASN1_STRING_length(s) == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(s), text,
                sizeof(text));
      out.push_back(absl::StrCat("IP:", text));
    }
  }
  return out;
}

absl::StatusOr<absl::Time> NotAfter(absl::string_view certificate_pem) {
  absl::StatusOr<Owned<X509>> cert = ParseCertificate(certificate_pem);
  if (!cert.ok()) return cert.status();
  struct tm tm = {};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert->get()), &tm) != 1)
    return absl::InvalidArgumentError("unreadable notAfter");
  return absl::FromTimeT(timegm(&tm));
}

}  // namespace disttrain
