import Foundation
import Testing
import Courier

@Suite("SHA-256 and SPKI pins")
struct SPKIPinTests {
    /// SHA-256 of arbitrary bytes through the public API: the pin of a "SubjectPublicKeyInfo" is
    /// just its SHA-256.
    func sha256Hex(_ bytes: [UInt8]) -> String {
        SPKIPin(subjectPublicKeyInfo: bytes).digest.map { String(format: "%02x", $0) }.joined()
    }

    /// FIPS 180-4 examples (NIST CSRC "SHA256.pdf") and lengths around the padding boundaries,
    /// checked against `sha256sum`.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func sha256MatchesTheStandardVectors(message: String, digest: String) {
        #expect(sha256Hex(Array(message.utf8)) == digest)
    }

    @Test(arguments: [
        (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
        (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
        (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
        (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
        (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
        (119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
        (120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
        (1000, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"),
    ])
    func sha256HandlesEveryPaddingBoundary(length: Int, digest: String) {
        #expect(sha256Hex([UInt8](repeating: UInt8(ascii: "a"), count: length)) == digest)
    }

    struct KeyFixture: Sendable, CustomStringConvertible {
        let name: String
        let algorithm: PublicKeyAlgorithm
        /// What `SecKeyCopyExternalRepresentation` returns: PKCS#1 for RSA, `04||X||Y` for EC.
        let key: String
        /// `openssl pkey -pubout -outform DER`.
        let spki: String
        /// `openssl dgst -sha256 -binary | base64` of the SPKI.
        let pin: String
        var description: String { name }
    }

    /// Keys generated with OpenSSL 3 (`genrsa 2048/4096`, `ecparam -name prime256v1/secp384r1/secp521r1`).
    static let keys: [KeyFixture] = [
        KeyFixture(
            name: "rsa2048", algorithm: .rsa,
            key:
                "MIIBCgKCAQEAnLesLK4xtxD1M48SSJJeKLxkRgLl1vNrAmSXvAAEtQGKkJQPE1JdhoyZ9+gBcMc27mqKYn5eKWjqFhhYV6ldCq0dfzEsqWCIXqADa6P7QokVjI71/QDDZoXGOZ6ImJdDBs7WzqpCHLpwESR1p1yDi6uO+f5P7yIWXeRSAZZCFdaEMlN6g9/T7G/vHImGE5SstKKPTNzIo8j7kNtQM63Zjd/PEFyZRzVh7yUH9wnodJn8iALZk011ffPoh1/xf97HaEqWpgmrIHdimIjbJVQYMP/t0WNQtdvT++Zk7I33+kjEu8WQ1inygoJ0T3ib6YPA3lxfk3LWUnOWzXTsONvs4QIDAQAB",
            spki:
                "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnLesLK4xtxD1M48SSJJeKLxkRgLl1vNrAmSXvAAEtQGKkJQPE1JdhoyZ9+gBcMc27mqKYn5eKWjqFhhYV6ldCq0dfzEsqWCIXqADa6P7QokVjI71/QDDZoXGOZ6ImJdDBs7WzqpCHLpwESR1p1yDi6uO+f5P7yIWXeRSAZZCFdaEMlN6g9/T7G/vHImGE5SstKKPTNzIo8j7kNtQM63Zjd/PEFyZRzVh7yUH9wnodJn8iALZk011ffPoh1/xf97HaEqWpgmrIHdimIjbJVQYMP/t0WNQtdvT++Zk7I33+kjEu8WQ1inygoJ0T3ib6YPA3lxfk3LWUnOWzXTsONvs4QIDAQAB",
            pin: "mt6CLBG7Uu5u3sdtY83KB03FYUxMEaEHh0q+IJmBHbo="),
        KeyFixture(
            name: "rsa4096", algorithm: .rsa,
            key:
                "MIICCgKCAgEAwJKYbIKAOib6uLLyfJXnyKqZrBJfcpr/hwBsJseZnoAwfDK8VYyNe5JslEy8eibSiJBE8kHMPOh4ZsspoT5DenHyF2jLnbGr9AbahgrwLjmp2JzW6kkDkcLrAWTOoYrNV4NQ077CVMUd0LyGN2Da96GAk2XMsKxtjPAz7F499Nd9a4T1ELLtrsQsTZXiK2g9SkP59MxgdFdemjknIvYs7tJlJ2Pp3FIKGdtTNVRNkKn+9G9S3WKEXL7SRCComEU0IMuo0J9m/W8CxsB7dXC9T9w3Wl8rw1ZvvAmbECOrRx1cdIYnRwgDJlW2fktkspAsG+aeTaULc67K5QWPOm+o5u1ilb4amhPRAu/05jLig2YWvL04OvYq+X4UaAikgvEffAvnIfG27PWeXjEbYtnZUvBAyTKJ4g5WOMy1YCxafcwVZllXt88kwF0Qa2Ox3LtJM0rzCLG49gujrAloU/MCJkH02C+LUfZmxYxPMNP8D3jWpe2b8lE9jnOCeE/+pNkyoO1wqQyyigJluakvpZSeWsqNRxRNa3zYGdSk7xOLbf9xnuvrL7XzedqJBwGwGNRPYndBi90FL7EPjOFnHNMOJ/M3qEIOzh+glfSoqpC7aLzUGwJxAnhP4f97qk3vLvDLwED5scvsvThNYY+VFba6ZkmRn5XLqfc9kGNlKSzGchsCAwEAAQ==",
            spki:
                "MIICIjANBgkqhkiG9w0BAQEFAAOCAg8AMIICCgKCAgEAwJKYbIKAOib6uLLyfJXnyKqZrBJfcpr/hwBsJseZnoAwfDK8VYyNe5JslEy8eibSiJBE8kHMPOh4ZsspoT5DenHyF2jLnbGr9AbahgrwLjmp2JzW6kkDkcLrAWTOoYrNV4NQ077CVMUd0LyGN2Da96GAk2XMsKxtjPAz7F499Nd9a4T1ELLtrsQsTZXiK2g9SkP59MxgdFdemjknIvYs7tJlJ2Pp3FIKGdtTNVRNkKn+9G9S3WKEXL7SRCComEU0IMuo0J9m/W8CxsB7dXC9T9w3Wl8rw1ZvvAmbECOrRx1cdIYnRwgDJlW2fktkspAsG+aeTaULc67K5QWPOm+o5u1ilb4amhPRAu/05jLig2YWvL04OvYq+X4UaAikgvEffAvnIfG27PWeXjEbYtnZUvBAyTKJ4g5WOMy1YCxafcwVZllXt88kwF0Qa2Ox3LtJM0rzCLG49gujrAloU/MCJkH02C+LUfZmxYxPMNP8D3jWpe2b8lE9jnOCeE/+pNkyoO1wqQyyigJluakvpZSeWsqNRxRNa3zYGdSk7xOLbf9xnuvrL7XzedqJBwGwGNRPYndBi90FL7EPjOFnHNMOJ/M3qEIOzh+glfSoqpC7aLzUGwJxAnhP4f97qk3vLvDLwED5scvsvThNYY+VFba6ZkmRn5XLqfc9kGNlKSzGchsCAwEAAQ==",
            pin: "km81Tp3JriQNgyZjH4CAY1Tvz4LsatQIqTMY6Ze9Yfo="),
        KeyFixture(
            name: "p256", algorithm: .ecP256,
            key: "BJre5g78o9CRsOLRSUU3JrUIKkaH4W1DFhf/P0r02YgyszsABXrUnwBh+W+PoIRsrHg3uhJvur+t1Sn/kVJV1pw=",
            spki:
                "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEmt7mDvyj0JGw4tFJRTcmtQgqRofhbUMWF/8/SvTZiDKzOwAFetSfAGH5b4+ghGyseDe6Em+6v63VKf+RUlXWnA==",
            pin: "n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM="),
        KeyFixture(
            name: "p384", algorithm: .ecP384,
            key:
                "BHvYRm9k68BucjxZGNQFE8h4xLVSOhbb+s0toj5DPFuTEMcfCRDgW63USlnx8ORW7aUH27glMs7K1uxJVrR/vrSY79u3j/gQSSI7zB2fHGCNaKoghpdVMbg5Vv/4EqxtSg==",
            spki:
                "MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEe9hGb2TrwG5yPFkY1AUTyHjEtVI6Ftv6zS2iPkM8W5MQxx8JEOBbrdRKWfHw5FbtpQfbuCUyzsrW7ElWtH++tJjv27eP+BBJIjvMHZ8cYI1oqiCGl1UxuDlW//gSrG1K",
            pin: "EQ0GTPsJIrIAzMmjppP4PDPmgkIsrAF5q9yuY5cv7t8="),
        KeyFixture(
            name: "p521", algorithm: .ecP521,
            key:
                "BAGjJppWZ6Og4hsDLY0tOR1MyRHPgXI1GqV6bGkjNOHAi28xPMAXpsT1RJp6qnxCSL0PXrP7FeBjRzX7UHntre0N0QDbE/pScJl96+JAq1HLdrZkkc8/QGODCqFCMlJRtNMjCXCvLYcUBMZrb/+nc0EeHuAwjbB514Q58A/8kzwp09wvzg==",
            spki:
                "MIGbMBAGByqGSM49AgEGBSuBBAAjA4GGAAQBoyaaVmejoOIbAy2NLTkdTMkRz4FyNRqlemxpIzThwItvMTzAF6bE9USaeqp8Qki9D16z+xXgY0c1+1B57a3tDdEA2xP6UnCZfeviQKtRy3a2ZJHPP0BjgwqhQjJSUbTTIwlwry2HFATGa2//p3NBHh7gMI2wedeEOfAP/JM8KdPcL84=",
            pin: "GTUCTdzwNzQ0wxSKxPiUo0RnQvzrRylOQCSS39MeeOE="),
    ]

    @Test(arguments: keys)
    func aBareKeyWrappedInItsSPKIHeaderHashesToTheOpenSSLPin(fixture: KeyFixture) throws {
        let key = try #require(Data(base64Encoded: fixture.key))
        let spki = try #require(Data(base64Encoded: fixture.spki))
        let fromKey = SPKIPin(publicKey: Array(key), algorithm: fixture.algorithm)
        #expect(fromKey.base64 == fixture.pin)
        #expect(SPKIPin(subjectPublicKeyInfo: spki) == fromKey)
        #expect(try SPKIPin(base64: fixture.pin) == fromKey)
    }

    @Test(arguments: ["sha256/n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM=", " n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM= "])
    func pinsAcceptTheCommonSpellings(text: String) throws {
        #expect(try SPKIPin(base64: text).base64 == "n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM=")
    }

    @Test(arguments: ["", "not base64!", "YWJj", "n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaMA"])
    func pinsThatAreNotA32ByteDigestAreRejected(text: String) {
        #expect(throws: PinningConfigurationError.self) { try SPKIPin(base64: text) }
    }
}
