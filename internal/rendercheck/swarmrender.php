<?php
// Renders comment bodies as P4 Code Review (Helix Swarm 2022.1) shows them:
// its Linkify pass, then Parsedown with line breaks on and raw HTML allowed
// (docs/reference/swarm.md, "How P4 Code Review renders a comment, and reads its mentions"). The
// Linkify pass here is written from that description, not Swarm's code.
// Reads a JSON array of bodies on stdin, writes a JSON array of HTML.

require '/usr/share/php/Parsedown/Parsedown.php';

// Words are split on white space and < > { }, the separators kept.
const WORD = '/([\s<>{}]+)/';
// Leading and trailing punctuation Linkify trims off a word before matching.
const TRIM = '/^([_\*”’"\'(<{\[]*)(.+?)([._\*”’"\',!?:;)>}\]]*)$/s';

function esc($s) { return htmlspecialchars($s, ENT_QUOTES | ENT_SUBSTITUTE, 'UTF-8'); }

// The code guess: a word that looks like a fence (``` or ~~~ and no more
// of them) or starts or ends with a backtick turns "in code" on (unless it
// closes itself, `x`) or off. In code, words are passed on unescaped and
// never linked.
function codeToggle($w) {
    if (preg_match('/^(`|~){3}[^`~]*$/', $w)) return true;
    return strlen($w) > 0 && strpos($w, '```') === false && ($w[0] === '`' || substr($w, -1) === '`');
}

// One word outside code: the link Linkify would make of it, or null.
function linkOf($t, $last) {
    if (strlen($t) >= 10 && preg_match('/^(([^\]]*\])*\(*((?:http|https|ftp):\/\/(?:[\w-]+@)?[\w.-]+(?::[0-9]{1,6})?(?:\/[\w.\-~!$&\'()*+,;=:@?\/#%]*[\w\-~!$*+=@\/#])?\/?))\)*$/iu', $t, $m)) {
        return '<a href="' . esc($m[3]) . '">' . esc($m[3]) . '</a>';
    }
    if (preg_match('/^([\w\-.+\']+@[\w.-]+\.[a-z]{2,4})$/iu', $t, $m)) {
        return '<a href="mailto:' . esc($m[1]) . '">' . esc($m[1]) . '</a>';
    }
    if (preg_match('/^@{1,2}[*!]?([\w\/]+(?:[\\\\\w\/.\-,!()\'%:#]*[\w\/])?)$/iu', $t, $m)) {
        $group = substr($t, 0, 2) === '@@';
        return '<a href="' . ($group ? '/group/' : '/@') . esc($m[1]) . '">' . esc($t) . '</a>';
    }
    if (preg_match('/^job[0-9]{6}$/i', $t)) {
        return '<a href="/@' . esc($t) . '">' . esc($t) . '</a>';
    }
    if (ctype_digit($t) && preg_match('/^(change(list)?|review|job)$/i', $last)) {
        return '<a href="/@' . $t . '">' . $t . '</a>';
    }
    return null;
}

function linkify($value) {
    $out = '';
    $code = false;
    $last = '';
    $afterBreak = false;
    foreach (preg_split(WORD, $value, -1, PREG_SPLIT_DELIM_CAPTURE) as $w) {
        if ($w === '') continue;
        if (preg_match('/^[\s<>{}]+$/', $w)) {
            $out .= $code ? $w : esc($w);
            if (strpos($w, "\n") !== false) $afterBreak = true;
            continue;
        }
        preg_match(TRIM, $w, $m);
        list($pre, $t, $post) = [$m[1], $m[2], $m[3]];
        if (codeToggle($t)) {
            $code = $code ? false : !preg_match('/`[^`]+`/', $t);
            $out .= ($code ? $pre : esc($pre)) . $t . ($code ? $post : esc($post));
        } elseif ($code) {
            $out .= $w;
        } else {
            // A number links after "change"/"review"/"job" only on the same line.
            $link = linkOf($t, $afterBreak ? '' : $last);
            $out .= $link === null ? esc($w) : esc($pre) . $link . esc($post);
        }
        $last = $t;
        $afterBreak = false;
    }
    return $out;
}

$bodies = json_decode(stream_get_contents(STDIN), true);
if (!is_array($bodies)) {
    fwrite(STDERR, "swarmrender.php: stdin is not a JSON array of strings\n");
    exit(2);
}
$out = [];
foreach ($bodies as $body) {
    $p = new Parsedown();
    $p->setBreaksEnabled(true);
    $out[] = $p->text(linkify(trim($body)));
}
echo json_encode($out);
