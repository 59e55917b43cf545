import Courier
import Foundation

/// Recognises a GraphQL response that refuses the access token although its status is 200: an
/// error whose `extensions.code` is one of the client's
/// ``GraphQLClient/Configuration/tokenRejectionCodes`` (Apollo's `UNAUTHENTICATED`). Set on each
/// call's context, where ``AuthInterceptor`` treats it like a 401: one refresh, one resend.
struct GraphQLTokenRejection: Sendable {
    let codes: Set<String>
    /// Whether a response that has `data` may still say the token was refused. `false` for a
    /// mutation: once execution began, fields before the refused one may have been applied, and
    /// sending the mutation again would apply them twice. Only a request error (no `data` member
    /// at all, GraphQL over HTTP §7.1.2) proves nothing ran.
    var allowsData = true
    /// Bodies larger than this are not inspected (an auth error is a few hundred bytes).
    static let scanLimit = 64 * 1024

    func matches(_ response: HTTPResponse) -> Bool {
        let body = response.data
        guard !codes.isEmpty, !body.isEmpty, body.count <= Self.scanLimit else { return false }
        // Cheap test first: almost every response mentions no such code at all.
        guard codes.contains(where: { body.range(of: Data($0.utf8)) != nil }) else { return false }
        // Read leniently: one entry of another shape (a numeric code, `extensions` that is not an
        // object, an error that is a string) must not hide the others.
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let errors = object["errors"] as? [Any]
        else { return false }
        if !allowsData, object["data"] != nil { return false }
        return errors.contains { entry in
            guard let extensions = (entry as? [String: Any])?["extensions"] as? [String: Any],
                let code = extensions["code"] as? String
            else { return false }
            return codes.contains(code)
        }
    }
}
