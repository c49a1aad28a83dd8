"""How much each descriptor set holds on its own: LightGBM on RDKit's 2D list (205, today's
``--descriptors``), the fast set (``--descriptors fast``, 121) and the fast set + AUTOCORR2D
(313), no graph. TDC tasks: train_val -> the official test set (half-life and clearance in
log10); the small tables: 5-fold CV. A proxy for the descriptors at the Graphormer's head,
not the model itself (experiments/results/tdc_admet/g400_fast/ is that).

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/descriptor_sets_proxy.py freesolv logp qed hiv \
        caco2_wang herg dili half_life_obach ppbr_az bbb_martins
"""
import io
import os
import sys
import time
import zipfile

import numpy as np
import pandas as pd
from rdkit import Chem, RDLogger
from rdkit.Chem import rdMolDescriptors as R
RDLogger.DisableLog('rdApp.*')
from graphnorm.chem.descriptors import _fast_values, descriptor_count, rdkit_descriptors
import lightgbm as lgb
from sklearn.model_selection import KFold
from sklearn.metrics import mean_absolute_error, roc_auc_score
from scipy.stats import spearmanr
RAW=os.environ.get('GRAPHNORM_RAW_DIR','../shared/datasets')
def _set(mol, smiles, which):
    """One set's values as the package computes them (the 2D list as the model reads it, the
    fast set raw, as the committed table was made); NaN where RDKit cannot (kept, so that
    labels stay aligned)."""
    try:
        return _fast_values(Chem.Mol(mol)) if which == "fast" else rdkit_descriptors(mol, smiles)[0]
    except Exception:
        return np.full(descriptor_count(which), np.nan)


def feats(smis):
    """[rdkit2d, fast, fast + AUTOCORR2D] feature matrices of a list of SMILES."""
    sets = ([], [], [])
    for s in smis:
        m = Chem.MolFromSmiles(s)
        if m is None:
            rows = [np.full(descriptor_count(w), np.nan) for w in (True, "fast")]
            rows.append(np.concatenate([rows[1], np.full(192, np.nan)]))
        else:
            rows = [_set(m, s, True), _set(m, s, "fast")]
            rows.append(np.concatenate([rows[1], R.CalcAUTOCORR2D(m)]))
        for out, row in zip(sets, rows):
            out.append(row)
    return [np.asarray(x, dtype=np.float64) for x in sets]
def model(cls):
    kw=dict(n_estimators=400,learning_rate=0.05,num_leaves=31,subsample=0.8,subsample_freq=1,colsample_bytree=0.5,verbose=-1,n_jobs=1)
    return lgb.LGBMClassifier(**kw) if cls else lgb.LGBMRegressor(**kw)
def score(metric,y,p):
    return {'mae':lambda:mean_absolute_error(y,p),'auroc':lambda:roc_auc_score(y,p),'spearman':lambda:spearmanr(y,p)[0],'rmse':lambda:float(np.sqrt(np.mean((y-p)**2)))}[metric]()
def fitpred(X,y,Xt,cls):
    m=model(cls).fit(X,y); return m.predict_proba(Xt)[:,1] if cls else m.predict(Xt)
z=zipfile.ZipFile(os.path.join(RAW,'tdc_admet_group/admet_group.zip'))
TDC={'caco2_wang':'mae','lipophilicity_astrazeneca':'mae','solubility_aqsoldb':'mae','ppbr_az':'mae','ld50_zhu':'mae','half_life_obach':'spearman','vdss_lombardo':'spearman','herg':'auroc','bbb_martins':'auroc','dili':'auroc','hia_hou':'auroc','pgp_broccatelli':'auroc','bioavailability_ma':'auroc','clearance_hepatocyte_az':'spearman'}
rows=[]
for task in sys.argv[1:]:
    t=time.time()
    if task in TDC:
        tr=pd.read_csv(io.BytesIO(z.read(f'admet_group/{task}/train_val.csv'))); te=pd.read_csv(io.BytesIO(z.read(f'admet_group/{task}/test.csv')))
        metric=TDC[task]; cls=metric=='auroc'
        ytr,yte=tr.Y.values,te.Y.values
        if metric=='spearman': ytr=np.log10(np.clip(ytr,1e-3,None))
        Ftr,Fte=feats(tr.Drug),feats(te.Drug)
        res=[score(metric,yte,fitpred(a,ytr,b,cls)) for a,b in zip(Ftr,Fte)]
    else:
        path={'freesolv':os.path.join(RAW,'small/freesolv.csv'),'qed':'data/derived/small/zinc_qed_2k.csv','logp':'data/derived/small/zinc_logp_noisy_1k.csv','hiv':'data/derived/small/molhiv_3k.csv'}[task]
        df=pd.read_csv(path); col={'freesolv':'expt','qed':'qed','logp':'logp_noisy','hiv':'HIV_active'}[task]
        y=df[col].values; cls=task=='hiv'; metric='auroc' if cls else 'rmse'
        F=feats(df.smiles); res=[]
        for X in F:
            p=np.zeros(len(y))
            for a,b in KFold(5,shuffle=True,random_state=0).split(X): p[b]=fitpred(X[a],y[a],X[b],cls)
            res.append(score(metric,y,p))
    rows.append((task,metric,*res)); print(task,metric,' '.join(f'{r:.4f}' for r in res),f'{time.time()-t:.0f}s',flush=True)
