import Foundation

/// An ISO 4217 currency: its alphabetic code, numeric code and minor-unit exponent.
///
/// Encodes to and decodes from its alphabetic code string (`"TWD"`). Apple Pay's decrypted
/// payment data names the currency by its numeric code (`"901"`), see ``init(numericCode:)``.
public struct Currency: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The alphabetic code, upper case: `"TWD"`.
    public let code: String
    /// The numeric code, three digits, zero padded: `"901"`.
    public let numericCode: String
    /// The number of decimals of the minor unit: 0 for JPY, 2 for USD, 3 for KWD.
    public let minorUnitExponent: Int

    private init(uncheckedCode code: String, numericCode: String, minorUnitExponent: Int) {
        self.code = code
        self.numericCode = numericCode
        self.minorUnitExponent = minorUnitExponent
    }

    /// The currency with this alphabetic code. Only upper-case ISO 4217 codes are accepted.
    public init(code: String) throws(MoneyError) {
        guard let found = Currency.byCode[code] else {
            throw MoneyError(.unknownCurrency, "'\(code.prefix(16))' is not an ISO 4217 currency code")
        }
        self = found
    }

    /// The currency with this numeric code (`"901"` is TWD). One or two digit forms are zero padded.
    public init(numericCode: String) throws(MoneyError) {
        let padded =
            numericCode.count < 3 && !numericCode.isEmpty && numericCode.allSatisfy(\.isASCIIDigit)
            ? String(repeating: "0", count: 3 - numericCode.count) + numericCode : numericCode
        guard let found = Currency.byNumericCode[padded] else {
            throw MoneyError(.unknownCurrency, "'\(numericCode.prefix(16))' is not an ISO 4217 numeric currency code")
        }
        self = found
    }

    /// The alphabetic code.
    public var description: String { code }

    /// Decodes the alphabetic code string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try Currency(code: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    /// Encodes the alphabetic code string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(code)
    }

    /// United States dollar (840, 2 decimals).
    public static let usd = Currency(uncheckedCode: "USD", numericCode: "840", minorUnitExponent: 2)
    /// New Taiwan dollar (901, 2 decimals).
    public static let twd = Currency(uncheckedCode: "TWD", numericCode: "901", minorUnitExponent: 2)
    /// Japanese yen (392, 0 decimals).
    public static let jpy = Currency(uncheckedCode: "JPY", numericCode: "392", minorUnitExponent: 0)
    /// Euro (978, 2 decimals).
    public static let eur = Currency(uncheckedCode: "EUR", numericCode: "978", minorUnitExponent: 2)
    /// Kuwaiti dinar (414, 3 decimals).
    public static let kwd = Currency(uncheckedCode: "KWD", numericCode: "414", minorUnitExponent: 3)
    /// Pound sterling (826, 2 decimals).
    public static let gbp = Currency(uncheckedCode: "GBP", numericCode: "826", minorUnitExponent: 2)
    /// Hong Kong dollar (344, 2 decimals).
    public static let hkd = Currency(uncheckedCode: "HKD", numericCode: "344", minorUnitExponent: 2)
    /// Singapore dollar (702, 2 decimals).
    public static let sgd = Currency(uncheckedCode: "SGD", numericCode: "702", minorUnitExponent: 2)
    /// South Korean won (410, 0 decimals).
    public static let krw = Currency(uncheckedCode: "KRW", numericCode: "410", minorUnitExponent: 0)
    /// Chinese yuan (156, 2 decimals).
    public static let cny = Currency(uncheckedCode: "CNY", numericCode: "156", minorUnitExponent: 2)
    /// Australian dollar (036, 2 decimals).
    public static let aud = Currency(uncheckedCode: "AUD", numericCode: "036", minorUnitExponent: 2)
    /// Canadian dollar (124, 2 decimals).
    public static let cad = Currency(uncheckedCode: "CAD", numericCode: "124", minorUnitExponent: 2)
    /// Bahraini dinar (048, 3 decimals).
    public static let bhd = Currency(uncheckedCode: "BHD", numericCode: "048", minorUnitExponent: 3)
    /// Saudi riyal (682, 2 decimals).
    public static let sar = Currency(uncheckedCode: "SAR", numericCode: "682", minorUnitExponent: 2)

    /// Every active ISO 4217 currency with a minor unit, sorted by alphabetic code.
    public static let all: [Currency] = table.split(separator: " ").map { entry in
        let parts = entry.split(separator: ":")
        return Currency(
            uncheckedCode: String(parts[0]), numericCode: String(parts[1]), minorUnitExponent: Int(parts[2])!)
    }

    private static let byCode: [String: Currency] = Dictionary(uniqueKeysWithValues: all.map { ($0.code, $0) })
    private static let byNumericCode: [String: Currency] = Dictionary(
        uniqueKeysWithValues: all.map { ($0.numericCode, $0) })

    // code:numeric:exponent (ISO 4217 list one, active codes; precious metals and testing codes,
    // which have no minor unit, are left out).
    private static let table = """
        AED:784:2 AFN:971:2 ALL:008:2 AMD:051:2 AOA:973:2 ARS:032:2 AUD:036:2 AWG:533:2 AZN:944:2 \
        BAM:977:2 BBD:052:2 BDT:050:2 BGN:975:2 BHD:048:3 BIF:108:0 BMD:060:2 BND:096:2 BOB:068:2 BOV:984:2 \
        BRL:986:2 BSD:044:2 BTN:064:2 BWP:072:2 BYN:933:2 BZD:084:2 CAD:124:2 CDF:976:2 CHE:947:2 CHF:756:2 \
        CHW:948:2 CLF:990:4 CLP:152:0 CNY:156:2 COP:170:2 COU:970:2 CRC:188:2 CUP:192:2 CVE:132:2 CZK:203:2 \
        DJF:262:0 DKK:208:2 DOP:214:2 DZD:012:2 EGP:818:2 ERN:232:2 ETB:230:2 EUR:978:2 FJD:242:2 FKP:238:2 \
        GBP:826:2 GEL:981:2 GHS:936:2 GIP:292:2 GMD:270:2 GNF:324:0 GTQ:320:2 GYD:328:2 HKD:344:2 HNL:340:2 \
        HTG:332:2 HUF:348:2 IDR:360:2 ILS:376:2 INR:356:2 IQD:368:3 IRR:364:2 ISK:352:0 JMD:388:2 JOD:400:3 \
        JPY:392:0 KES:404:2 KGS:417:2 KHR:116:2 KMF:174:0 KPW:408:2 KRW:410:0 KWD:414:3 KYD:136:2 KZT:398:2 \
        LAK:418:2 LBP:422:2 LKR:144:2 LRD:430:2 LSL:426:2 LYD:434:3 MAD:504:2 MDL:498:2 MGA:969:2 MKD:807:2 \
        MMK:104:2 MNT:496:2 MOP:446:2 MRU:929:2 MUR:480:2 MVR:462:2 MWK:454:2 MXN:484:2 MXV:979:2 MYR:458:2 \
        MZN:943:2 NAD:516:2 NGN:566:2 NIO:558:2 NOK:578:2 NPR:524:2 NZD:554:2 OMR:512:3 PAB:590:2 PEN:604:2 \
        PGK:598:2 PHP:608:2 PKR:586:2 PLN:985:2 PYG:600:0 QAR:634:2 RON:946:2 RSD:941:2 RUB:643:2 RWF:646:0 \
        SAR:682:2 SBD:090:2 SCR:690:2 SDG:938:2 SEK:752:2 SGD:702:2 SHP:654:2 SLE:925:2 SOS:706:2 SRD:968:2 \
        SSP:728:2 STN:930:2 SVC:222:2 SYP:760:2 SZL:748:2 THB:764:2 TJS:972:2 TMT:934:2 TND:788:3 TOP:776:2 \
        TRY:949:2 TTD:780:2 TWD:901:2 TZS:834:2 UAH:980:2 UGX:800:0 USD:840:2 USN:997:2 UYI:940:0 UYU:858:2 \
        UYW:927:4 UZS:860:2 VED:926:2 VES:928:2 VND:704:0 VUV:548:0 WST:882:2 XAF:950:0 XCD:951:2 XCG:532:2 \
        XOF:952:0 XPF:953:0 YER:886:2 ZAR:710:2 ZMW:967:2 ZWG:924:2
        """
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
