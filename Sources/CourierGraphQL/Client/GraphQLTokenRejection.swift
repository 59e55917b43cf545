import Courier
import Foundation

/// Recognises a GraphQL response that refuses the access token although its status is 200: an
/// error whose `extensions.code` is one of the client's
/// ``GraphQLClient/Configuration/tokenRejectionCodes`` (Apollo's `UNAUTHENTICATED`). Set on each
/// call's context, where ``AuthInterceptor`` treats it like a 401: one refresh, one resend.
struct GraphQLTokenRejection: Sendable {
    let codes: Set<String>
    /// Bodies larger than this are not inspected (an auth error is a few hundred bytes).
    static let scanLimit = 64 * 1024

    private struct ErrorsOnly: Decodable {
        struct Entry: Decodable { var extensions: Extensions? }
        struct Extensions: Decodable { var code: String? }
        var errors: [Entry]?
    }

    func matches(_ response: HTTPResponse) -> Bool {
        let body = response.data
        guard !codes.isEmpty, !body.isEmpty, body.count <= Self.scanLimit else { return false }
        // Cheap test first: almost every response mentions no such code at all.
        guard codes.contains(where: { body.range(of: Data($0.utf8)) != nil }) else { return false }
        guard let decoded = try? JSONDecoder().decode(ErrorsOnly.self, from: body) else { return false }
        return decoded.errors?.contains { $0.extensions?.code.map(codes.contains) == true } ?? false
    }
}
