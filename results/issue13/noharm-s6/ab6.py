# The interleaved A/B runner of issue 13 sessions 4-6 (a copy of noharm-s5/ab5.py), kept with its output:
#   python3 ab5.py 15 "-t 2 -p 0.1 -d 0.3" glibc=none new=src/.libs/libbravo-bravo-ba.so ...
import subprocess, sys, statistics, os, re
# usage: ab5.py rounds "noharm args" name=lib[@ENV=VAL] ...; ratios vs first, with quartiles
rounds=int(sys.argv[1]); args=sys.argv[2].split(); specs=sys.argv[3:]
libs=[]
for sp in specs:
    n,rest=sp.split('=',1); parts=rest.split('@'); libs.append((n,parts[0],dict(p.split('=',1) for p in parts[1:])))
res={n:[] for n,_,_ in libs}
for r in range(rounds):
    for n,l,e in libs:
        env=dict(os.environ); env.update(e)
        if l!='none': env['LD_PRELOAD']=l
        out=subprocess.run(['/work/main/bench/noharm']+args,env=env,capture_output=True,text=True).stdout
        res[n].append(float(re.search(r'throughput=([0-9.e+]+)',out).group(1)))
base=libs[0][0]
def q(xs):
    xs=sorted(xs); k=len(xs); return xs[k//4], statistics.median(xs), xs[(3*k)//4]
out=[]
for n,_,_ in libs:
    rs=[a/b for a,b in zip(res[n],res[base])]
    lo,md,hi=q(rs)
    out.append('%s %.2f [%.2f-%.2f] (%.1fM)'%(n,md,lo,hi,statistics.median(res[n])/1e6))
print(sys.argv[2],' | '.join(out))
