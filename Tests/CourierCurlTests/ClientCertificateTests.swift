#if canImport(CCurl)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierCurl

/// Mutual TLS against TestServer/tls_server.py's `client_certificate` listener, which requires a
/// client certificate from its own client CA and answers with the subject it verified; and chain
/// pinning against its `chain` listener (CA → leaf).
@Suite("CurlTransport: client certificates and pins anywhere in the chain")
struct ClientCertificateTests {
    struct Identity: Decodable {
        var certificate: String
        var key: String
        var encryptedKey: String
        var pkcs12: String
        var subject: String
    }
    struct Info: Decodable {
        var clientIdentity: Identity
        var otherIdentity: Identity
        var chainLeafSpkiSha256: String
        var chainWithDecoy: Int
        var decoySpkiSha256: String
    }
    struct Echo: Decodable {
        var subject: String
        var issuer: String
    }

    private func info() throws -> Info {
        let path = try CurlServers.value("COURIER_TLS_INFO")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Info.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private func transport(_ identity: ClientIdentity?) throws -> CurlTransport {
        let authorities = URL(fileURLWithPath: try CurlServers.value("COURIER_TLS_CA_FILE"))
        return CurlTransport {
            $0.trustedCertificateAuthorities = authorities
            if let identity { $0.clientIdentities = ["127.0.0.1": identity] }
        }
    }

    private func whoAmI(_ transport: CurlTransport) async throws -> (Int, Echo?) {
        let response = try await transport.send(
            URLRequest(url: try CurlServers.url("COURIER_TLS_CLIENT_CERT_URL").appendingPathComponent("whoami")))
        return (response.statusCode, try? JSONDecoder().decode(Echo.self, from: response.data))
    }

    @Test("PEM certificate and key: 200, and the server saw the client certificate's subject")
    func pemIdentity() async throws {
        let identity = try info().clientIdentity
        let (status, echo) = try await whoAmI(
            try transport(
                .pemFiles(certificate: URL(fileURLWithPath: identity.certificate), privateKey: URL(fileURLWithPath: identity.key))
            ))
        #expect(status == 200)
        #expect(echo?.subject == identity.subject)
        #expect(echo?.issuer == "CN=Courier client CA")
    }

    @Test("an encrypted PEM key with its passphrase, and a PKCS#12 archive")
    func encryptedKeyAndPKCS12() async throws {
        let identity = try info().clientIdentity
        let encrypted = ClientIdentity.pemFiles(
            certificate: URL(fileURLWithPath: identity.certificate), privateKey: URL(fileURLWithPath: identity.encryptedKey),
            passphrase: "courier")
        #expect(try await whoAmI(try transport(encrypted)).1?.subject == identity.subject)
        let archive = ClientIdentity.pkcs12(try Data(contentsOf: URL(fileURLWithPath: identity.pkcs12)), passphrase: "courier")
        #expect(try await whoAmI(try transport(archive)).1?.subject == identity.subject)
        #expect(!archive.description.contains("courier"), "the description never shows the passphrase")
    }

    @Test("a wrong passphrase is URLError.clientCertificateRejected, before anything reaches the server")
    func wrongPassphrase() async throws {
        let identity = try info().clientIdentity
        let archive = ClientIdentity.pkcs12(try Data(contentsOf: URL(fileURLWithPath: identity.pkcs12)), passphrase: "wrong")
        await #expect {
            _ = try await whoAmI(try transport(archive))
        } throws: { error in
            (error as? URLError)?.code == .clientCertificateRejected
        }
    }

    @Test("without a certificate, or with one from a CA the server does not trust, the request fails with a URLError")
    func missingOrUntrustedCertificate() async throws {
        let other = try info().otherIdentity
        let untrusted = ClientIdentity.pemFiles(
            certificate: URL(fileURLWithPath: other.certificate), privateKey: URL(fileURLWithPath: other.key))
        for identity in [nil, untrusted] {
            await #expect {
                _ = try await whoAmI(try transport(identity))
            } throws: { error in
                // The server ends the TLS connection; libcurl names no reason beyond that.
                [.networkConnectionLost, .secureConnectionFailed].contains((error as? URLError)?.code)
            }
        }
    }

    @Test("a pinned CA key passes for a chain CA → leaf; the leaf's key passes too; neither fails with the chain's pins")
    func pinAnywhereInTheChain() async throws {
        let authorities = URL(fileURLWithPath: try CurlServers.value("COURIER_TLS_CA_FILE"))
        let caPin = try CurlServers.value("COURIER_TLS_PIN")
        let leafPin = try info().chainLeafSpkiSha256
        let chain = try CurlServers.url("COURIER_TLS_CHAIN_URL").appendingPathComponent("ok")
        for pins in [[caPin, TLSTests.unrelatedPin], [leafPin, TLSTests.unrelatedPin]] {
            let transport = CurlTransport {
                $0.trustedCertificateAuthorities = authorities
                $0.pinning = try? PinningPolicy(pins: ["127.0.0.1": pins])
            }
            #expect(try await transport.send(URLRequest(url: chain)).statusCode == 200, "\(pins)")
        }
        let strict = CurlTransport {
            $0.trustedCertificateAuthorities = authorities
            $0.pinning = try? PinningPolicy(pins: ["127.0.0.1": [TLSTests.unrelatedPin, TLSTests.otherUnrelatedPin]])
        }
        await #expect {
            _ = try await strict.send(URLRequest(url: chain))
        } throws: { error in
            (error as? URLError)?.pinningFailure == .pinMismatch(host: "127.0.0.1", presented: [leafPin, caPin])
        }
    }

    @Test("a pin on a certificate the server only sends along, off the verified chain, does not pass")
    func pinOffTheVerifiedChainIsRefused() async throws {
        let authorities = URL(fileURLWithPath: try CurlServers.value("COURIER_TLS_CA_FILE"))
        let caPin = try CurlServers.value("COURIER_TLS_PIN")
        let info = try info()
        // leaf → CA, then an unrelated self-signed certificate: what an interceptor holding a
        // trusted certificate would send, with the genuine server's certificate appended.
        let decoyed = try #require(URL(string: "https://127.0.0.1:\(info.chainWithDecoy)/ok"))
        let control = CurlTransport {
            $0.trustedCertificateAuthorities = authorities
            $0.pinning = try? PinningPolicy(pins: ["127.0.0.1": [caPin, TLSTests.unrelatedPin]])
        }
        #expect(try await control.send(URLRequest(url: decoyed)).statusCode == 200, "the chain itself verifies")
        let decoyPinned = CurlTransport {
            $0.trustedCertificateAuthorities = authorities
            $0.pinning = try? PinningPolicy(pins: ["127.0.0.1": [info.decoySpkiSha256, TLSTests.unrelatedPin]])
        }
        await #expect {
            _ = try await decoyPinned.send(URLRequest(url: decoyed))
        } throws: { error in
            (error as? URLError)?.pinningFailure
                == .pinMismatch(host: "127.0.0.1", presented: [info.chainLeafSpkiSha256, caPin])
        }
    }

    @Test("requests on a reused connection to a pinned host pass without a new chain; a refused connection is never reused")
    func reusedConnections() async throws {
        let authorities = URL(fileURLWithPath: try CurlServers.value("COURIER_TLS_CA_FILE"))
        let pin = try CurlServers.value("COURIER_TLS_PIN")
        let good = CurlTransport {
            $0.trustedCertificateAuthorities = authorities
            $0.pinning = try? PinningPolicy(pins: ["127.0.0.1": [pin, TLSTests.unrelatedPin]])
        }
        let hello = try CurlServers.url("COURIER_TLS_URL").appendingPathComponent("tls/hello")
        for _ in 0..<5 { #expect(try await good.send(URLRequest(url: hello)).statusCode == 200) }
        let bad = CurlTransport {
            $0.trustedCertificateAuthorities = authorities
            $0.pinning = try? PinningPolicy(pins: ["127.0.0.1": [TLSTests.unrelatedPin, TLSTests.otherUnrelatedPin]])
        }
        for _ in 0..<3 {
            await #expect {
                _ = try await bad.send(URLRequest(url: hello))
            } throws: { error in
                (error as? URLError)?.pinningFailure != nil
            }
        }
    }
}
#endif
