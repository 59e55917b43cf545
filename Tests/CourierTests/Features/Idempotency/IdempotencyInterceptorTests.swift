import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension RetryTests {
    /// `IdempotencyInterceptor`: which key is sent, how, and when not.
    @Suite struct IdempotencyInterceptorTests {
        @Test func automaticKeyIsAUUIDStableForTheCall() async throws {
            let stub = StubTransport(responses: [.status(201), .status(201)])
            let client = RetryFixture.client(stub)
            let policy = EndpointPolicy.standard.with(\.idempotency, .automatic)
            let first = try await client.response(for: RetryFixture.request(.post, policy: policy))
            let second = try await client.response(for: RetryFixture.request(.post, policy: policy))
            let keys = stub.requests.compactMap { $0.value(forHTTPHeaderField: "Idempotency-Key") }
            #expect(keys.count == 2)
            #expect(keys[0] == first.context.idempotencyKey)
            #expect(keys[1] == second.context.idempotencyKey)
            #expect(keys[0] != keys[1])  // one key per logical call, not per client
            #expect(UUID(uuidString: keys[0]) != nil)
        }

        @Test func callerSuppliedKeyIsSent() async throws {
            let stub = StubTransport(responses: [.status(201)])
            let policy = EndpointPolicy.authorizedWrite.with(\.auth, .none).with(\.idempotency, .key("order-2026-0042"))
            _ = try await RetryFixture.client(stub).response(for: RetryFixture.request(.post, policy: policy))
            #expect(stub.requests.first?.value(forHTTPHeaderField: "Idempotency-Key") == "order-2026-0042")
        }

        @Test func noKeyNoHeader() async throws {
            let stub = StubTransport(responses: [.status(201)])
            _ = try await RetryFixture.client(stub).response(for: RetryFixture.request(.post, policy: .standard))
            #expect(stub.requests.first?.value(forHTTPHeaderField: "Idempotency-Key") == nil)
        }

        @Test func headerSetByTheEndpointIsKept() async throws {
            let stub = StubTransport(responses: [.status(201)])
            let policy = EndpointPolicy.standard.with(\.idempotency, .automatic)
            let request = RetryFixture.request(.post, policy: policy).header("Idempotency-Key", "mine")
            _ = try await RetryFixture.client(stub).response(for: request)
            #expect(stub.requests.first?.value(forHTTPHeaderField: "Idempotency-Key") == "mine")
        }

        @Test(arguments: ["", "  ", "\t"])
        func aBlankKeyMakesAPostNoSaferToRepeat(_ blank: String) async throws {
            // No key in the policy: the blank header is no key, so the POST is sent once.
            let stub = StubTransport(responses: [.status(503), .status(503), .status(201)])
            let request = RetryFixture.request(.post, policy: .standard).header("Idempotency-Key", blank)
            let error = await RetryFixture.networkError { try await RetryFixture.client(stub).send(request) }
            #expect(error?.statusCode == 503)
            #expect(stub.requestCount == 1)
        }

        @Test func aBlankKeyIsReplacedByThePolicysKey() async throws {
            let stub = StubTransport(responses: [.status(503), .status(201)])
            let policy = EndpointPolicy.standard.with(\.idempotency, .automatic)
            let request = RetryFixture.request(.post, policy: policy).header("Idempotency-Key", "")
            let response = try await RetryFixture.client(stub).response(for: request)
            let keys = stub.requests.map { $0.value(forHTTPHeaderField: "Idempotency-Key") }
            #expect(response.statusCode == 201)
            #expect(keys.count == 2)
            #expect(keys.allSatisfy { $0 == response.context.idempotencyKey && $0?.isEmpty == false })
        }

        @Test func structuredStringEncoding() async throws {
            let stub = StubTransport(responses: [.status(201)])
            let client = APIClient(environment: RetryFixture.environment) {
                $0.transport = stub
                $0.interceptors = [IdempotencyInterceptor(encoding: .structuredString)]
            }
            let policy = EndpointPolicy.standard.with(\.idempotency, .key(#"a"b\c"#))
            _ = try await client.response(for: RetryFixture.request(.post, policy: policy))
            #expect(stub.requests.first?.value(forHTTPHeaderField: "Idempotency-Key") == #""a\"b\\c""#)
        }

        @Test(arguments: ["", " padded", "line\nbreak", "tab\there", "ключ"])
        func invalidKeysFailWithoutSending(_ key: String) async throws {
            let stub = StubTransport(responses: [.status(201)])
            let policy = EndpointPolicy.standard.with(\.idempotency, .key(key))
            let error = await RetryFixture.networkError {
                try await RetryFixture.client(stub).send(RetryFixture.request(.post, policy: policy))
            }
            guard case .invalidRequest? = error else {
                Issue.record("expected invalidRequest, got \(String(describing: error))")
                return
            }
            #expect(stub.requestCount == 0)
        }
    }
}
