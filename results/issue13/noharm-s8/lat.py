# Uncontended pairs: python3 lat.py ROUNDS name=lib[@ENV=VAL]... (lib "none": glibc, no preload);
# per lock: median ns, median ratio to the first [quartiles].
import subprocess, sys, statistics, os, re
rounds=int(sys.argv[1]); specs=sys.argv[2:]
libs=[]
for sp in specs:
    n,rest=sp.split('=',1); parts=rest.split('@'); libs.append((n,parts[0],dict(p.split('=',1) for p in parts[1:])))
res={n:{'rd':[],'wr':[]} for n,_,_ in libs}
for r in range(rounds):
    for n,l,e in libs:
        env=dict(os.environ); env.update(e)
        if l!='none': env['LD_PRELOAD']=l
        out=subprocess.run(['/work/main/bench/rwmix','--latency','--iterations','2000000'],env=env,capture_output=True,text=True).stdout
        m=re.search(r'rd_ns=([0-9.]+) wr_ns=([0-9.]+)',out)
        res[n]['rd'].append(float(m.group(1))); res[n]['wr'].append(float(m.group(2)))
base=libs[0][0]
for k in ('rd','wr'):
    row=[]
    for n,_,_ in libs:
        rs=sorted(a/b for a,b in zip(res[n][k],res[base][k]))
        row.append('%s %.2fns x%.3f [%.3f-%.3f]'%(n,statistics.median(res[n][k]),statistics.median(rs),rs[len(rs)//4],rs[(3*len(rs))//4]))
    print(k,' | '.join(row))
