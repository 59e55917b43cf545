import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// ``CertificateFailure``: the kind, the codes, the libcurl messages URLSession on Linux passes on.
@Suite("Certificate failures")
struct CertificateFailureTests {
    /// libcurl 7.88.1 / OpenSSL 3.0 messages, measured with the curl tool and with
    /// FoundationNetworking against TestServer/tls_server.py's certificate-failure listeners.
    @Test(
        "libcurl's certificate messages map to the serverCertificate… codes",
        arguments: [
            ("SSL certificate problem: certificate has expired", URLError.Code.serverCertificateHasBadDate),
            ("SSL certificate problem: certificate is not yet valid", .serverCertificateNotYetValid),
            ("SSL certificate problem: self-signed certificate", .serverCertificateHasUnknownRoot),
            ("SSL certificate problem: self signed certificate", .serverCertificateHasUnknownRoot),
            ("SSL certificate problem: self-signed certificate in certificate chain", .serverCertificateHasUnknownRoot),
            ("SSL certificate problem: unable to get local issuer certificate", .serverCertificateHasUnknownRoot),
            ("SSL certificate problem: certificate revoked", .serverCertificateUntrusted),
            ("SSL: no alternative certificate subject name matches target host name '127.0.0.1'", .serverCertificateUntrusted),
            (
                "SSL: certificate subject name 'a.example' does not match target host name 'b.example'",
                .serverCertificateUntrusted
            ),
            ("SSL: public key does not match pinned public key", .serverCertificateUntrusted),
        ])
    func libcurlMessages(message: String, code: URLError.Code) {
        #expect(CertificateFailure.code(forLibcurlMessage: message) == code)
    }

    @Test("other libcurl messages are no certificate failure")
    func otherMessages() {
        for message in [
            "transfer closed with 10 bytes remaining to read", "Recv failure: Connection reset by peer",
            "OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to 127.0.0.1:443", "",
        ] {
            #expect(CertificateFailure.code(forLibcurlMessage: message) == nil, "\(message)")
        }
    }

    @Test("the four serverCertificate… codes are certificate failures with a message of their own; others are not")
    func kindAndMessage() {
        for failure in CertificateFailure.allCases {
            let error = NetworkError(URLError(failure.code))
            #expect(error.kind == .transport)
            #expect(error.certificateFailure == failure)
            #expect(error.userMessage == ErrorMessages.certificateMessage)
        }
        let lost = NetworkError(URLError(.networkConnectionLost))
        #expect(lost.certificateFailure == nil)
        #expect(lost.userMessage == "A network error occurred.")
        #expect(NetworkError(URLError(.secureConnectionFailed)).certificateFailure == nil)
    }

    @Test("URLSessionTransport turns the -1 of a refused certificate into its code, keeping the original")
    func linuxRemapping() {
        let original = URLError(
            .unknown, userInfo: [NSLocalizedDescriptionKey: "SSL certificate problem: certificate has expired"])
        let mapped = URLSessionTransport.mappedFailure(original)
        #expect(mapped.code == .serverCertificateHasBadDate)
        #expect((mapped.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == URLError.Code.unknown.rawValue)
        #expect(URLSessionTransport.mappedFailure(URLError(.unknown)).code == .unknown)
    }

    @Test("the pin of a DER certificate is its SubjectPublicKeyInfo's SHA-256")
    func certificatePin() throws {
        // A self-signed P-256 certificate (openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256)
        // and its pin from `openssl x509 -pubkey | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64`.
        let der = try #require(Data(base64Encoded: Self.certificate))
        #expect(SPKIPin(certificateDER: Array(der))?.base64 == Self.pin)
        #expect(SPKIPin(certificateDER: Array(der.prefix(40))) == nil)
        #expect(SPKIPin(certificateDER: []) == nil)
    }

    static let certificate = [
        "MIIBejCCASGgAwIBAgIUSPPufQf4nvYSeG5wz2XoJbo4+KAwCgYIKoZIzj0EAwIwEzERMA8GA1UEAwwIcGluLXRlc3QwHhcN",
        "MjYxMjAyMDIwNDMwWhcNMjYxMjAzMDIwNDMwWjATMREwDwYDVQQDDAhwaW4tdGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEH",
        "A0IABHNKHHc82eHlU1EnQ3gafmeSuY8GaeO4SIeapks1PMRPeeGJWCRYtk7pM5RfvWfAZfiBeco2RTT07oPRLA2+iy+jUzBR",
        "MB0GA1UdDgQWBBQV8O/A3wKeOb43tCK65SThwO15xTAfBgNVHSMEGDAWgBQV8O/A3wKeOb43tCK65SThwO15xTAPBgNVHRMB",
        "Af8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIH1H19NfVtVcCH5Jwc68wJkhtQx1JTYTxJDJSDVj8Xj+AiB6O7JK1Ah/FS6W",
        "ff+Vm09UCc6AaGy3KqV1+HqMc4EuuQ==",
    ].joined()
    static let pin = "ZFb1Fr9fht7Vr+Bx7GFQSvNAFEJTSZD58yNh1tO5S1U="
}
