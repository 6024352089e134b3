"""areaDetector's NTNDArray codecs decoded by the adapter (no server): vectors
made by the bitshuffle library itself, images compressed as the codec plugin
sends them (the simulated server's encoder), and what is refused."""

from __future__ import annotations

import numpy as np
import pytest

from synoptic_adapters.pva.codecs import CodecError, decompress, original_dtype
from synoptic_adapters.pva.convert import ConvertError, convert, layout_of
from synoptic_adapters.sim.nd_encode import encode
from synoptic_adapters.sim.pva_server import CODEC_IMAGES, codec_image, compressed

BIG = 1 << 30
# bitshuffle 0.5.2's compress_lz4(array, 0) of three arrays: full blocks, a
# partial last block, and elements left over after the last multiple of 8
BSLZ4_U2_5003 = (
    "0000022d1faa0100ffed1f660100ffed1f1e0100ffed2b54ab02001c2b11002bab94220030ab"
    "544b05000902001da424001953200000020010a80500090200090d000002000f7d00ff604a98"
    "3367cc04000b0f003c67cc1822002d678c350010c729000904001d6348001b30220029336731"
    "00015400030700062a000f7d00ff4e85e0c3870f1f3c78f0080016430b00031b0017201e0002"
    "130018103100011300190844000013001a84570030c3870f16000a3900057500041b000f7d00"
    "ff60f60300fc07f01fc07f00ff03f80fe03f80ff007c0b00031b00001600030b000326000931"
    "00011b00023c00010b000326000b570034fc07f062000626000f7d00ff71f40c0000f8ff1f00"
    "80ffff0300f0ff3f0000ff7f0000fcff0f00c0ffff1b0000160046ff0700e01b00093100011b"
    "00093100014c00093100014c00046200013100016700046200013100006700011600094c0000"
    "1600063100001b000f7d00ff3c7000000000e0ffff00021000f50100e501300000f012000009"
    "00001b00103f090018f81b00101f120018fc1b00100f1200003500051b00300700005702071b"
    "00046200061b00003500006200051b00107f12000f7d00ff5c04020000cf0100020001830101"
    "0200000e0000020001000200020010800e0000020001e50100020010c00e0000020001000200"
    "020001cf0100020000e50101020001cf0100020000e501010200004c02010200010e00000200"
    "0f7d00ff68007e010f0200ffffffffffffffffffffffef500000000000000001be1faa01005d"
    "1f6601005d1f1e01005d6054ab54ab542b050009020011941800080200184b0d000102001da4"
    "24001153180008020018a80d0001020072983367cc9833cc0700000b0002040012180700040f"
    "00419833678c2900010b00032e001ac70f004367cc98631a0006260016300b00031700b11f3c"
    "78f0e043f0e0c3870f0b0003080016200b00031b0010102900031e0002130018083100011300"
    "19844400001300093100011300b1e03f80ff007c00ff03f80f0b0070fc07f01fc07f00160003"
    "0b00031b00001600030b00031b00093100011b00023c00010b000326000b5700f10aff03f8ff"
    "3f0000ff7f0000fcff0f00c0ffff0000f8ff1f0080160046ff0700e01b0000160046ff0300f0"
    "1b00093100011b00093100014c00093100016700006600005600500000f0ffff7100500000e0"
    "ffff5600007c00071b00101f120018fc1b00100f1200003500051b005007000000801200051b"
    "00310300006200061b00010200107f3b00010200010f00045600000200014000000200015600"
    "00020010c00e0000020001560000020000a20001020000560001020001bd0000020000710001"
    "020000bd00010200010e000f0200ffff8b500000000000000007000e00"
)
BSLZ4_F4_301 = (
    "000000ce1f000100ffff3910aa01000c4f0200140008020010cc010004250004190000140008"
    "020010f001000025000021000419000014000802004100ff00ff230000210004190001150008"
    "02006200ffff0000aa2100051d00011500001900040400530000ffa0cc2100051d00001f0000"
    "21000608003000c8f074000b150010001200020200010d00110c4400030d00071d0004020001"
    "150010f0bc000f1d0000040200011d0013fe25000f020005012d000f25000d0102000f25005c"
    "039b000f02000b0027000f0200095000000000000000144200801442000015420080154200001642"
)
BSLZ4_U1_77 = (
    "00000023504a29a594520500508c31c61863050050104208218405001f000100145000000000"
    "000203040001"
)


@pytest.mark.parametrize(
    ("hexed", "expected"),
    [
        (BSLZ4_U2_5003, (np.arange(5003, dtype=np.uint16) * 7 % 1000).astype("<u2")),
        (BSLZ4_F4_301, np.arange(301, dtype="<f4") / 8),
        (BSLZ4_U1_77, (np.arange(77) % 5).astype(np.uint8)),
    ],
)
def test_bitshuffle_lz4_as_the_bitshuffle_library_writes_it(
    hexed: str, expected: np.ndarray
) -> None:
    data = np.frombuffer(bytes.fromhex(hexed), np.uint8)
    out = decompress("bslz4", data, expected.dtype, expected.size)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("codec", [c for c in CODEC_IMAGES if c != "zfp"])
def test_images_compressed_as_area_detector_sends_them(codec: str) -> None:
    value = compressed(codec, 7)
    image = convert(value, layout_of(value), BIG)
    expected = codec_image(codec, 7)
    assert (image.shape, image.dtype) == (expected.shape, expected.dtype)
    if codec == "jpeg":  # lossy
        assert np.abs(image.astype(int) - expected).max() <= 8
    else:
        np.testing.assert_array_equal(image, expected)


def test_every_element_type_survives_bslz4_lz4_and_blosc() -> None:
    rng = np.random.default_rng(5)
    for code in ("i1", "u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f4", "<f8"):
        array = rng.integers(0, 100, 9001).astype(code)
        for codec in ("lz4", "bslz4", "blosc"):
            data = np.frombuffer(encode(codec, array), np.uint8)
            out = decompress(codec, data, array.dtype, array.size)
            np.testing.assert_array_equal(out, array, err_msg=f"{codec} {code}")


def test_what_is_refused_with_the_reason() -> None:
    unknown = compressed("zfp", 1)
    with pytest.raises(ConvertError, match=r"codec 'zfp': not one the adapter "
                       r"decompresses \(lz4, bslz4, blosc, jpeg\)"):  # fmt: skip
        convert(unknown, layout_of(unknown), BIG)
    value = compressed("lz4", 1)
    layout = layout_of(value)
    with pytest.raises(ConvertError, match="exceeds the limit of 1000 bytes"):
        convert(value, layout, 1000)  # checked before decompressing
    value["value"] = ("ubyteValue", np.zeros(100, np.uint8))
    with pytest.raises(ConvertError, match="lz4 data could not be decompressed"):
        convert(value, layout, BIG)
    value = compressed("bslz4", 1)
    value["value"] = ("ubyteValue", value["value"][:-50])
    with pytest.raises(ConvertError, match="bslz4 data"):
        convert(value, layout, BIG)
    value = compressed("blosc", 1)
    value["dimension"] = [{"size": 64}, {"size": 96}]  # not what the data holds
    with pytest.raises(ConvertError, match="blosc data holds 24576 bytes, not 12288"):
        convert(value, layout, BIG)
    value = compressed("jpeg", 1)
    value["dimension"] = [{"size": 3}, {"size": 100}, {"size": 96}]
    with pytest.raises(ConvertError, match="jpeg image of 128x96"):
        convert(value, layout, BIG)
    value["value"] = ("ubyteValue", np.arange(50, dtype=np.uint8))
    with pytest.raises(ConvertError, match="not a JPEG image"):
        convert(value, layout, BIG)
    for parameters in (None, 10, -1, "u2"):
        with pytest.raises(CodecError, match=r"codec\.parameters|NDDataType"):
            original_dtype(parameters)
