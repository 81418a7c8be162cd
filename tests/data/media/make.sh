#!/usr/bin/env bash
# How the media fixtures were made (Debian 12's ffmpeg 5.1; not needed to build or test clef):
# real encoders' output, kept tiny — a 440 Hz tone and a 64x48 test pattern at 8 kHz / 5 fps.
set -euo pipefail
cd "$(dirname "$0")"
tone=(-f lavfi -i "sine=frequency=440:sample_rate=8000:duration=2")
pattern=(-f lavfi -i "testsrc=size=64x48:rate=5:duration=1")
common=(-y -hide_banner -loglevel error)
out=(-map_metadata -1 -fflags +bitexact -flags:a +bitexact -flags:v +bitexact)
ffmpeg "${common[@]}" "${tone[@]}" -c:a pcm_u8 "${out[@]}" tone-2s.wav
ffmpeg "${common[@]}" "${tone[@]}" -c:a libmp3lame -b:a 16k "${out[@]}" tone-2s.mp3
ffmpeg "${common[@]}" "${tone[@]}" -c:a flac "${out[@]}" tone-2s.flac
ffmpeg "${common[@]}" "${tone[@]}" -c:a libvorbis -q:a 0 "${out[@]}" tone-2s.ogg
ffmpeg "${common[@]}" "${tone[@]}" -c:a libopus -b:a 6k "${out[@]}" tone-2s.opus
ffmpeg "${common[@]}" "${tone[@]}" -c:a aac -b:a 16k "${out[@]}" tone-2s.m4a
ffmpeg "${common[@]}" "${tone[@]}" -c:a aac -b:a 16k -f adts "${out[@]}" tone-2s.aac
ffmpeg "${common[@]}" "${tone[@]}" -c:a libopus -b:a 6k "${out[@]}" tone-2s.webm
ffmpeg "${common[@]}" "${pattern[@]}" -f lavfi -i "sine=frequency=440:sample_rate=8000:duration=1" \
  -c:v libx264 -preset ultrafast -pix_fmt yuv420p -c:a aac -b:a 16k -shortest "${out[@]}" clip-1s.mp4
ffmpeg "${common[@]}" "${pattern[@]}" -c:v libx264 -preset ultrafast -pix_fmt yuv420p "${out[@]}" clip-1s-silent.mp4
ffmpeg "${common[@]}" "${pattern[@]}" -f lavfi -i "sine=frequency=440:sample_rate=8000:duration=1" \
  -c:v libvpx -b:v 20k -c:a libopus -b:a 6k -shortest "${out[@]}" clip-1s.webm
ffmpeg "${common[@]}" "${pattern[@]}" -c:v mjpeg -q:v 20 "${out[@]}" clip-1s.mov
ffmpeg "${common[@]}" "${pattern[@]}" -c:v libvpx -b:v 20k "${out[@]}" clip-1s.mkv
ffmpeg "${common[@]}" -f lavfi -i "testsrc=size=64x48:duration=1" -frames:v 1 "${out[@]}" pattern-64x48.png
ffmpeg "${common[@]}" -f lavfi -i "testsrc=size=64x48:duration=1" -frames:v 1 "${out[@]}" pattern-64x48.jpg
ffmpeg "${common[@]}" -f lavfi -i "testsrc=size=64x48:duration=1" -frames:v 1 -c:v libwebp -lossless 0 "${out[@]}" pattern-64x48.webp
ffmpeg "${common[@]}" -f lavfi -i "testsrc=size=64x48:duration=1" -frames:v 1 -c:v libwebp -lossless 1 "${out[@]}" pattern-64x48-lossless.webp
# The awkward ones: a VBR MP3 without a Xing header (noise, then silence), a fragmented MP4 (its
# mvhd covers none of the media), AAC behind an ID3 tag, a video-only WebM.
ffmpeg "${common[@]}" -f lavfi -i "anoisesrc=d=1:r=8000,apad=pad_dur=2" -c:a libmp3lame -q:a 9 -write_xing 0 "${out[@]}" noise-then-silence-3s-vbr.mp3
ffmpeg "${common[@]}" -f lavfi -i "testsrc=size=32x24:rate=5:duration=3" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 5 -movflags frag_keyframe+empty_moov "${out[@]}" clip-3s-fragmented.mp4
ffmpeg "${common[@]}" "${tone[@]}" -c:a aac -b:a 16k -f adts -write_id3v2 1 "${out[@]}" tone-2s-id3.aac
ffmpeg "${common[@]}" "${pattern[@]}" -c:v libvpx -b:v 20k "${out[@]}" clip-1s-silent.webm
# A scene for the Box question (TypeSafe takes 280 to 1568 pixels a side): a red square on white,
# its box top 0.2, bottom 0.5, left 0.5, right 0.7 of the 400x300 frame.
ffmpeg "${common[@]}" -f lavfi -i "color=c=white:s=400x300,drawbox=x=200:y=60:w=80:h=90:color=red:t=fill" \
  -frames:v 1 "${out[@]}" red-square-400x300.png
ffmpeg "${common[@]}" -f lavfi -i "color=c=white:s=400x300,drawbox=x=200:y=60:w=80:h=90:color=red:t=fill" \
  -frames:v 1 "${out[@]}" red-square-400x300.jpg
