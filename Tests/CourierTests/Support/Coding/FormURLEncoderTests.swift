import Foundation
import Testing
import Courier

extension CodingTests {
    @Suite struct FormURLEncoderTests {
        struct Login: Encodable {
            let username: String
            let password: String
            let remember: Bool
            let scopes: [String]
        }

        @Test func encodesEncodableAsFormBody() throws {
            let login = Login(
                username: "jo ann+1@example.com", password: "p&ss=w#rd~", remember: true, scopes: ["read", "write"])
            let body = try FormURLEncoder().encode(login)
            let expected =
                "password=p%26ss%3Dw%23rd~&remember=true&scopes=read&scopes=write"
                + "&username=jo%20ann%2B1%40example.com"
            #expect(String(decoding: body, as: UTF8.self) == expected)
        }

        @Test func usesQueryEncoderOptions() throws {
            let encoder = FormURLEncoder(queryEncoder: URLQueryEncoder(arrayEncoding: .brackets, boolEncoding: .numeric))
            let body = try encoder.encode(Login(username: "u", password: "p", remember: false, scopes: ["a"]))
            #expect(String(decoding: body, as: UTF8.self) == "password=p&remember=0&scopes%5B%5D=a&username=u")
        }

        @Test func encodesItemsInGivenOrder() {
            let body = FormURLEncoder().encode([
                URLQueryItem(name: "z", value: "1 2"),
                URLQueryItem(name: "a", value: "+"),
                URLQueryItem(name: "flag", value: nil),
            ])
            #expect(body == Data("z=1%202&a=%2B&flag".utf8))
        }

        @Test func contentType() {
            #expect(FormURLEncoder.contentType == "application/x-www-form-urlencoded")
        }

        @Test func topLevelScalarThrows() {
            #expect(throws: EncodingError.self) {
                try FormURLEncoder().encode(5)
            }
        }
    }
}
