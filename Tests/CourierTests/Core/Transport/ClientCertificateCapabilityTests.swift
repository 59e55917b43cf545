import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client-certificate stand-in for the Apple adapter: answers every challenge of a host with an
/// identity (the real adapter also checks the challenge's method).
struct FakeClientCertificates: ClientCertificateProvider {
    let readable: Bool

    func decision(for challenge: URLAuthenticationChallenge, identity: ClientIdentity?) -> ClientCertificateDecision? {
        guard identity != nil else { return nil }
        guard readable else { return .refused(URLError(.clientCertificateRejected)) }
        return .present(URLCredential(user: "identity", password: "", persistence: .forSession))
    }
}

@Suite("Client certificates follow the capabilities (both branches run on Linux)")
struct ClientCertificateCapabilityTests {
    private let identity = ClientIdentity.pkcs12(Data([1, 2, 3]), passphrase: "secret")

    @Test("a challenge from a host with an identity is answered with its credential; other hosts get default handling")
    func presentsTheHostsIdentity() throws {
        let delegate = TransportSessionDelegate(
            capabilities: .apple, serverTrust: NoServerTrustEvaluator(),
            clientCertificates: FakeClientCertificates(readable: true),
            clientIdentities: ["api.example.com": identity])
        let challenge = TransportFixtures.basicChallenge(failure: nil)
        let (disposition, credential) = delegate.answer(challenge, taskID: 1)
        #expect(disposition == .useCredential)
        #expect(credential?.user == "identity")
        let other = TransportSessionDelegate(
            capabilities: .apple, serverTrust: NoServerTrustEvaluator(),
            clientCertificates: FakeClientCertificates(readable: true),
            clientIdentities: ["other.example.com": identity])
        #expect(other.answer(challenge, taskID: 2).0 == .performDefaultHandling)
    }

    @Test("an identity that cannot be read cancels the challenge and the call fails with clientCertificateRejected")
    func unreadableIdentityFailsTheCall() async throws {
        let delegate = TransportSessionDelegate(
            capabilities: .apple, serverTrust: NoServerTrustEvaluator(),
            clientCertificates: FakeClientCertificates(readable: false),
            clientIdentities: ["api.example.com": identity])
        let task = FakeTransportTask(3, in: delegate)
        async let call = delegate.run(task)
        try await task.waitFor("resume")
        #expect(delegate.answer(TransportFixtures.basicChallenge(failure: nil), taskID: 3).0 == .cancelAuthenticationChallenge)
        delegate.complete(3, error: URLError(.cancelled), response: nil)
        do {
            _ = try await call
            Issue.record("an unreadable identity must fail the call")
        } catch let error as URLError {
            #expect(error.code == .clientCertificateRejected)
        }
    }

    @Test("where URLSession cannot present a certificate (Linux), a request to a host with an identity fails before it is sent")
    func linuxRefusesBeforeSending() async throws {
        let transport = URLSessionTransport(
            configuration: URLSessionTransport.defaultConfiguration(), capabilities: .foundationNetworking,
            clientIdentities: ["API.example.com": identity])
        await #expect {
            // Port 9 (discard) on a name that never resolves: the refusal must come first.
            _ = try await transport.send(URLRequest(url: URL(string: "https://api.example.com:9/x")!))
        } throws: { error in
            (error as? URLError)?.code == .clientCertificateRequired
        }
        #expect(TransportCapabilities.foundationNetworking.presentsClientCertificates == false)
        #expect(TransportCapabilities.apple.presentsClientCertificates)
    }
}
