import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
@testable import CourierEnvironments
import CourierTesting

@Suite("Switches one at a time, each with the sign-out of the environment it left", .timeLimit(.minutes(1)))
struct EnvironmentSwitchOrderTests {
    typealias F = EnvironmentFixture

    /// A sign-out participant whose reset waits until the test opens its gate.
    struct GatedSignOut: Interceptor, SessionResettable {
        let entered: AsyncStream<Void>.Continuation
        let gate: AsyncStream<Void>

        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            try await next(request)
        }
        func resetSession() async throws {
            entered.yield()
            for await _ in gate { return }
        }
        var sessionResetStage: SessionResetStage { .signOut }
    }

    /// Staging's sign-out on the switch to production is still under way (a participant before the
    /// token manager waits) when the app switches back to staging and signs in. The switch back
    /// returned at once, and the sign-out, going on afterwards, ended the new sign-in.
    @Test func aSignInAfterASwitchBackOutlivesTheSignOutOfTheFirstSwitch() async throws {
        let set = try F.set(channel: .testFlight, sessionsOnSwitch: .signedOut)
        let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
        let (gate, opener) = AsyncStream.makeStream(of: Void.self)
        let tokens = EnvironmentScoped { environment in
            TokenManager(
                store: InMemoryTokenStore(), transport: StubTransport { _ in .status(500) },
                grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("token")))
        }
        let client = try APIClient(environments: set) { configuration, environment in
            configuration.transport = StubTransport { _ in .json("{}") }
            let gated: [any Interceptor] =
                environment.id == "staging" ? [GatedSignOut(entered: enteredContinuation, gate: gate)] : []
            configuration.interceptors = gated + [AuthInterceptor(tokenManager: tokens[environment])]
        }
        let staging = tokens[try #require(set.environment("staging"))]
        try await staging.signIn(AuthTokens(accessToken: "first", refreshToken: "r"))

        let away = Task { try await set.switchEnvironment(to: "production") }
        for await _ in entered { break }  // staging's sign-out has begun
        // The app switches back and signs in once the switch returns.
        let switchedBack = Locked(false)
        let back = Task {
            try await set.switchEnvironment(to: "staging")
            switchedBack.withLock { $0 = true }
            try await staging.signIn(AuthTokens(accessToken: "second", refreshToken: "r"))
        }
        // Give the switch back time to return (it did at once before): bounded, and a slow
        // machine only makes the test miss the defect, never fail wrongly.
        await Self.wait(for: switchedBack, atMost: .milliseconds(500))
        opener.yield()
        opener.finish()
        try await away.value
        try await back.value
        #expect(set.current.id == "staging")
        #expect(try await staging.isSignedIn())
        withExtendedLifetime(client) {}
    }

    /// Waits until `flag` is set, at most `limit` (real time).
    static func wait(for flag: Locked<Bool>, atMost limit: Duration) async {
        let clock = ContinuousClock()
        let end = clock.now + limit
        while clock.now < end, !flag.current {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
