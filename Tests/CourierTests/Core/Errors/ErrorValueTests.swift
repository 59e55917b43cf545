import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CoreTests {
    /// `NetworkError` as a value: comparison, kinds, `Retry-After`, user messages an app can replace, and
    /// every public error a `LocalizedError` with its own description.
    @Suite struct ErrorValues {
        @Test func errorsCompareByKindAndValueAndAreLocalizedErrors() {
            let lost = NetworkError.transport(URLError(.networkConnectionLost))
            #expect(lost == .transport(URLError(.networkConnectionLost)))
            #expect(lost != .transport(URLError(.cannotConnectToHost)))
            #expect(NetworkError.signedOut.kind == .signedOut)
            #expect(NetworkError.notCached.localizedDescription == NetworkError.notCached.userMessage)
            let failed = FailedResponse(HTTPResponse(statusCode: 503, headers: ["Retry-After": "120"]))
            #expect(NetworkError.server(failed).retryAfter == .seconds(120))
        }

        /// An app's "try again in …" reads `retryAfter` for every error that has a wait, the
        /// circuit breaker's and the token endpoint's hold included.
        @Test func backendUnavailableCarriesItsWaitAsRetryAfter() {
            func held(_ wait: Duration) -> NetworkError { .backendUnavailable(host: "api.example.com", retryAfter: wait) }
            #expect(held(.seconds(300)).retryAfter == .seconds(300))
            #expect(held(.milliseconds(1500)).retryAfter == .seconds(2))
            #expect(held(.zero).retryAfter == .seconds(0))
        }

        @Test func appMessagesReplaceTheEnglishOnesAndFallBack() {
            let saved = NetworkError.messages
            defer { NetworkError.messages = saved }
            NetworkError.messages = ErrorMessages([.offline: "Pas de connexion."])
            #expect(NetworkError.offline(URLError(.notConnectedToInternet)).userMessage == "Pas de connexion.")
            #expect(NetworkError.timedOut(nil).userMessage == "The request took too long.")
            NetworkError.messages = ErrorMessages { $0.kind == .timedOut ? "Trop long." : nil }
            #expect(NetworkError.timedOut(nil).errorDescription == "Trop long.")
        }

        @Test func everyPublicErrorIsALocalizedErrorWithItsDescription() {
            let errors: [any Error] = [
                EmptyBodyError(),
                TokenStoreError.failed("disk full"),
                TokenRefreshRejection(statusCode: 400, error: "invalid_grant", errorDescription: "Refresh token revoked"),
                PinningConfigurationError.missingBackupPin(host: "api.example.com"),
            ]
            for error in errors {
                #expect(!error.localizedDescription.contains("couldn"), "\(error)")
            }
            #expect(
                TokenRefreshRejection(statusCode: 400, error: "invalid_grant", errorDescription: "Refresh token revoked")
                    .localizedDescription == "Refresh token revoked")
        }
    }
}
