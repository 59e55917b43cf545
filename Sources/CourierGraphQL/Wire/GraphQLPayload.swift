import Courier
import Foundation

/// A GraphQL response body (GraphQL spec §7.1): `data`, `errors` and `extensions`.
///
/// `data` that is absent, `null`, or does not decode while errors explain why (a non-null field
/// nulled by an error) becomes `nil`; `data` that does not decode without any error is a decoding
/// failure of the call. A body with neither `data` nor `errors` is not a GraphQL response.
struct GraphQLPayload<ResponseData: Decodable & Sendable>: Decodable, Sendable {
    var data: ResponseData?
    var errors: [GraphQLError]
    var extensions: [String: GraphQLValue]

    private enum CodingKeys: String, CodingKey { case data, errors, extensions }

    /// Thrown for a JSON body that has neither `data` nor `errors`.
    struct NotAGraphQLResponse: Error, CustomStringConvertible {
        var description: String { "the body has neither data nor errors: not a GraphQL response" }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        errors = try container.decodeIfPresent([GraphQLError].self, forKey: .errors) ?? []
        extensions = (try? container.decodeIfPresent([String: GraphQLValue].self, forKey: .extensions)) ?? [:]
        guard container.contains(.data) else {
            if errors.isEmpty { throw NotAGraphQLResponse() }
            data = nil
            return
        }
        if try container.decodeNil(forKey: .data) {
            data = nil
            return
        }
        do {
            data = try container.decode(ResponseData.self, forKey: .data)
        } catch  where !errors.isEmpty {
            // A field error nulled a field the type does not mark optional: the errors say why.
            data = nil
        }
    }
}

/// The response media types of the GraphQL-over-HTTP draft.
enum GraphQLMediaType {
    /// The preferred response type: its 4xx/5xx carry GraphQL errors, not a proxy's page.
    static let graphQLResponse = "application/graphql-response+json"
    /// The legacy response type (and the request body type).
    static let json = "application/json"
    /// What the client accepts, preferred first (GraphQL-over-HTTP draft, "Accept").
    static let accept = "\(graphQLResponse), \(json)"

    /// Whether `mediaType` (from ``of(_:)``) is JSON: `application/json` or any `+json` type.
    static func isJSON(_ mediaType: String?) -> Bool {
        guard let mediaType else { return false }
        return mediaType == json || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
    }

    /// The media type of a `Content-Type` value: before any `;`, trimmed, lower-cased.
    static func of(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? contentType
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }
}
